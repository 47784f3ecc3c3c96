package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

var budgetThread = []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1.1"}}

// budgetScript is a goal that writes a plan (one item done, one not), then
// makes a call ($0.003) that passes a $0.0025 run budget; the continued
// run's turns are added to the returned script.
func budgetScript() (*subRouter, *agenttest.ScriptedProvider) {
	rt := newSubRouter()
	p := rt.script("Objective: two steps",
		calls(call("p1", "todo_write", map[string]any{"todos": []map[string]string{
			{"content": "write one", "status": "completed"}, {"content": "write two", "status": "pending"}}})),
		withUsage(calls(call("w1", "write_file", map[string]string{"path": "one.txt", "content": "1\n"})), agent.Usage{Prompt: 1000, Completion: 100}),
		answer("Step one is done.")) // the continued run's first answer
	return rt, p
}

// finishBoth is the continued run's end: the plan done, the goal complete.
func finishBoth() []agenttest.Turn {
	return append([]agenttest.Turn{calls(call("p2", "todo_write", map[string]any{"todos": []map[string]string{
		{"content": "write one", "status": "completed"}, {"content": "write two", "status": "completed"}}}))},
		endGoal("complete", map[string]any{"summary": "Both steps done."}, "Done.", nil)...)
}

func budgetOptions(rt *subRouter, o runnertest.Options) runnertest.Options {
	set := pricedSettings()
	set.Runner.MaxCostPerTask = 0.0025
	o.Provider, o.Settings, o.Configure = rt, set, pricedModels(rt)
	return o
}

// parkedOnBudget submits the goal with a chat thread and returns the
// budget card it waits behind, checking what the card says.
func parkedOnBudget(t *testing.T, svc *runner.Service) (store.Task, store.Approval) {
	t.Helper()
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "two steps", Goal: true, Posture: "auto", Notify: budgetThread})
	card := waitPending(t, svc, task.ID)
	if card.Tool != "budget" || card.Subject != "cost_budget" {
		t.Fatalf("card = %s %q", card.Tool, card.Subject)
	}
	for _, want := range []string{"$0.0030", "Plan: 1 done, 1 remaining", "write two", "Last step: todo_write", "+ $0.0025"} {
		if !contains(card.Preview, want) {
			t.Errorf("card preview lacks %q:\n%s", want, card.Preview)
		}
	}
	evs := runnertest.Events(t, svc, task.ID, "approval_requested")
	if p := payload(t, evs[len(evs)-1]); p["kind"] != "budget" || p["budget"] != "$0.0025" || p["done"] != float64(1) || p["remaining"] != float64(1) {
		t.Fatalf("approval_requested = %v", p)
	}
	return task, card
}

// TestBudgetCardMoreBudgetCompletes: a chat task that spends its cost
// budget parks behind a card instead of ending; "+ budget" by an approver
// continues the same task with a fresh budget, and it completes with the
// spend of both runs.
func TestBudgetCardMoreBudgetCompletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, p := budgetScript()
	svc := runnertest.Start(t, budgetOptions(rt, runnertest.Options{}))
	task, card := parkedOnBudget(t, svc)
	// The card takes its own choices only.
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "allow_task", Approver: "bob", Role: store.RoleApprove}); !errors.Is(err, runner.ErrInvalid) {
		t.Fatalf("allow_task on a budget card: %v", err)
	}
	// The requester may not extend its own budget.
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "allow_once", Approver: "api:alice", Role: store.RoleApprove}); !errors.Is(err, runner.ErrForbidden) {
		t.Fatalf("the requester's decision: %v", err)
	}
	p.Add(finishBoth()...)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.Summary != "Both steps done." {
		t.Fatalf("after + budget: %s %+v", done.State, done.Result)
	}
	if !near(done.Result.Cost, 0.003+0.0003+0.0003) {
		t.Fatalf("cost over both runs = %v", done.Result.Cost)
	}
	if n := len(runnertest.Events(t, svc, task.ID, "budget_extended")); n != 1 {
		t.Fatalf("%d budget_extended events", n)
	}
}

// TestBudgetCardStop: Stop ends the parked task as today's
// budget_exhausted, keeping its spend; a stop_publish on an ordinary
// call's approval is refused.
func TestBudgetCardStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, _ := budgetScript()
	svc := runnertest.Start(t, budgetOptions(rt, runnertest.Options{}))
	task, card := parkedOnBudget(t, svc)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "deny", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "cost_budget" || !near(done.Result.Cost, 0.003) ||
		!contains(done.Result.Reason, "cost budget $0.0025 reached ($0.0030 spent") {
		t.Fatalf("after Stop: %s %+v", done.State, done.Result)
	}
	if n := len(runnertest.Events(t, svc, task.ID, "final_report")); n != 1 {
		t.Fatalf("%d final reports", n)
	}
}

// TestBudgetCardExpiryStops: nobody answering the card by its deadline is
// a Stop.
func TestBudgetCardExpiryStops(t *testing.T) {
	clk := newClock()
	rt, _ := budgetScript()
	svc := runnertest.Start(t, budgetOptions(rt, runnertest.Options{Now: clk.Now}))
	task, _ := parkedOnBudget(t, svc)
	clk.Advance(31 * time.Minute)
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "cost_budget" {
		t.Fatalf("after expiry: %s %+v", done.State, done.Result)
	}
}

// TestBudgetCardSurvivesRestart: the parked task holds no worker and its
// card outlives the service; a fresh service on the same store takes the
// decision and continues the task.
func TestBudgetCardSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, p := budgetScript()
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, budgetOptions(rt, runnertest.Options{Store: st}))
	task, card := parkedOnBudget(t, svc)
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := svc.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	svc2 := runnertest.Start(t, budgetOptions(rt, runnertest.Options{Store: st}))
	if got := runnertest.WaitState(t, svc2, task.ID, 0, store.StateWaitingApproval); got.State != store.StateWaitingApproval {
		t.Fatalf("after restart: %s", got.State)
	}
	p.Add(finishBoth()...)
	if _, err := svc2.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc2, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("after + budget on the new service: %s %+v", done.State, done.Result)
	}
}

// TestBudgetWithoutNotifyEnds: without a notify target the task ends as
// budget_exhausted at once, as before, and no card is recorded.
func TestBudgetWithoutNotifyEnds(t *testing.T) {
	t.Parallel()
	rt, _ := budgetScript()
	svc := runnertest.Start(t, budgetOptions(rt, runnertest.Options{}))
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "two steps", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed, store.StateWaitingApproval)
	if done.State != store.StateBudgetExhausted {
		t.Fatalf("state = %s", done.State)
	}
	if list, err := svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: task.ID}); err != nil || len(list) != 0 {
		t.Fatalf("approvals = %+v, %v", list, err)
	}
}

// TestBudgetWarningOnce: a run whose spend crosses [runner] budget_warn
// of its cost budget logs one budget_warning, however many calls follow
// under the limit; a run below it logs none.
func TestBudgetWarningOnce(t *testing.T) {
	t.Parallel()
	u := agent.Usage{Prompt: 1000, Completion: 100} // $0.003 a call
	small := agent.Usage{Prompt: 100, Completion: 10}
	rt := newRouter()
	rt.script("spend",
		withUsage(calls(call("c1", "write_file", map[string]string{"path": "a.txt", "content": "a"})), u),
		withUsage(calls(call("c2", "write_file", map[string]string{"path": "b.txt", "content": "b"})), u),
		withUsage(calls(call("c3", "write_file", map[string]string{"path": "c.txt", "content": "c"})), u), // $0.009: past 80% of $0.01
		withUsage(calls(call("c4", "write_file", map[string]string{"path": "d.txt", "content": "d"})), small),
		answer("spent"))
	rt.script("cheap", withUsage(answer("cheap"), u))
	set := pricedSettings()
	set.Runner.MaxCostPerTask = 0.01
	if set.Runner.BudgetWarn != 0.8 {
		t.Fatalf("default budget_warn = %v", set.Runner.BudgetWarn)
	}
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
	for _, tc := range []struct {
		prompt string
		warns  int
	}{{"spend", 1}, {"cheap", 0}} {
		task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: tc.prompt, Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
		if done.State != store.StateSucceeded {
			t.Fatalf("%s: %s %+v", tc.prompt, done.State, done.Result)
		}
		evs := runnertest.Events(t, svc, task.ID, "budget_warning")
		if len(evs) != tc.warns {
			t.Fatalf("%s: %d budget_warning events", tc.prompt, len(evs))
		}
		if tc.warns == 1 {
			if p := payload(t, evs[0]); p["budget"] != "cost" || p["limit"] != 0.01 || !near(p["spent"].(float64), 0.009) {
				t.Fatalf("budget_warning = %v", p)
			}
		}
	}
}
