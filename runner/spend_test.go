package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// perCall is every scripted call's usage in the spend tests: on fake/big
// it costs (1000×2 + 100×10)/1e6 USD.
var perCall = agent.Usage{Prompt: 1000, Completion: 100}

const perCallUSD = 0.003

// wantSpend fails unless res holds exactly n calls of perCall on model,
// priced or not.
func wantSpend(t *testing.T, what string, res *store.Result, model string, n int, priced bool) {
	t.Helper()
	if res == nil {
		t.Fatalf("%s: no result", what)
	}
	m := res.Models[model]
	wantUSD, wantUnpriced := float64(n)*perCallUSD, 0
	if !priced {
		wantUSD, wantUnpriced = 0, n*(perCall.Prompt+perCall.Completion)
	}
	if res.Tokens.Prompt != n*perCall.Prompt || res.Tokens.Completion != n*perCall.Completion ||
		!near(res.Cost, wantUSD) || res.UnpricedTokens != wantUnpriced || res.CostComplete != priced ||
		len(res.Models) != 1 || m.Calls != n || m.Priced != priced || !near(m.Cost, wantUSD) {
		t.Fatalf("%s: spend %+v, want %d calls of %+v on %s (priced %v)", what, res, n, perCall, model, priced)
	}
}

// TestSpendSurvivesHandOver: a run cut short after two priced calls (its
// node stops and hands the task over without recording an end) is
// continued on another node, which makes one more call: the task's cost
// is that of all three calls, because each call's usage event is the
// record of its spend.
func TestSpendSurvivesHandOver(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	rt := newRouter()
	rt.script("cut after two calls",
		withUsage(calls(bashCall("c1", "echo one")), perCall),
		withUsage(calls(bashCall("c2", "touch started; sleep 30")), perCall),
		withUsage(answer("finished elsewhere"), perCall))
	var scratch string
	node := func(name string) func(*runner.Config) {
		return func(c *runner.Config) {
			pricedModels(rt)(c)
			c.Node = name
			if scratch == "" {
				scratch = c.ScratchDir
			}
		}
	}
	a := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Settings: pricedSettings(), Configure: node("a")})
	task, _, err := a.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "cut after two calls", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(scratch, task.ID, "started"))
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := a.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Task(ctx, task.ID); got.State != store.StateQueued {
		t.Fatalf("after the hand-over: %s", got.State)
	}
	b := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Settings: pricedSettings(), Configure: node("b")})
	done := runnertest.WaitState(t, b, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != "b" {
		t.Fatalf("continued: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	wantSpend(t, "after the hand-over", done.Result, "fake/big", 3, true)
	rep := finalReport(t, b, task.ID)
	if c, _ := rep["cost"].(float64); !near(c, 3*perCallUSD) {
		t.Fatalf("final report cost = %v", rep["cost"])
	}
}

// TestSpendKeptAcrossCancel: a finished task continued by a message waits
// in the queue behind a busy worker and is cancelled there; it keeps the
// spend of its first run — cost, tokens, completeness and the breakdown —
// on a priced model and on an unpriced one.
func TestSpendKeptAcrossCancel(t *testing.T) {
	for _, model := range []string{"fake/big", "fake/free"} {
		t.Run(model, func(t *testing.T) {
			ctx := context.Background()
			rt := newRouter()
			rt.script("first", withUsage(answer("first answer"), perCall), withUsage(answer("never"), perCall))
			rt.script("hold the worker", calls(bashCall("c1", "sleep 30")), answer("woke"))
			set := pricedSettings()
			set.DefaultModel = model
			set.Runner.MaxConcurrentTasks = 1
			svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
			task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "first"})
			if err != nil {
				t.Fatal(err)
			}
			first := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed)
			wantSpend(t, "first run", first.Result, model, 1, model == "fake/big")
			hold, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "hold the worker", Posture: "yolo"})
			if err != nil {
				t.Fatal(err)
			}
			waitEvent(t, svc, hold.ID, "tool_started")
			queued, err := svc.Message(ctx, task.ID, runner.Principal{ID: "api:a", Role: store.RoleAdmin}, "more please")
			if err != nil || queued.State != store.StateQueued {
				t.Fatalf("continue: %s, %v", queued.State, err)
			}
			got, err := svc.Cancel(ctx, task.ID)
			if err != nil || got.State != store.StateCancelled || got.Result.Error != "cancelled" {
				t.Fatalf("cancel queued: %s %+v, %v", got.State, got.Result, err)
			}
			wantSpend(t, "cancelled in the queue", got.Result, model, 1, model == "fake/big")
			if _, err := svc.Cancel(ctx, hold.ID); err != nil {
				t.Fatal(err)
			}
			runnertest.WaitState(t, svc, hold.ID, 0, store.StateCancelled)
		})
	}
}

// TestSpendKeptAcrossResume: a task out of its tool-call budget after two
// calls is resumed and makes a third; its cost is all three.
func TestSpendKeptAcrossResume(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("over budget",
		withUsage(calls(call("c1", "write_file", map[string]string{"path": "a", "content": "1"})), perCall),
		withUsage(calls(call("c2", "write_file", map[string]string{"path": "b", "content": "2"})), perCall),
		withUsage(answer("done after the resume"), perCall))
	set := pricedSettings()
	set.Runner.MaxToolCalls = 1
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "over budget", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	out := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed)
	if out.State != store.StateBudgetExhausted {
		t.Fatalf("first run: %s %+v", out.State, out.Result)
	}
	wantSpend(t, "out of budget", out.Result, "fake/big", 2, true)
	resumed, err := svc.Resume(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Result == nil || !near(resumed.Result.Cost, 2*perCallUSD) {
		t.Fatalf("resumed task lost its spend: %+v", resumed.Result)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("after the resume: %s %+v", done.State, done.Result)
	}
	wantSpend(t, "after the resume", done.Result, "fake/big", 3, true)
}

// TestSpendOfDeadRunCounts: a node died after two priced calls (its usage
// events are in the log; it never recorded an end). A live node takes the
// task over once the heartbeat is stale and makes one more call: the
// result counts all three, at the prices they were made at.
func TestSpendOfDeadRunCounts(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Prompt: "died twice priced"}, "")
	if err != nil {
		t.Fatal(err)
	}
	dead := "dead-node"
	if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &dead}); err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 2; step++ {
		p := fmt.Sprintf(`{"step":%d,"model":"fake/big","prompt":%d,"completion":%d,"cached":0,"cost":%v}`,
			step, perCall.Prompt, perCall.Completion, perCallUSD)
		if _, err := st.AppendEvent(ctx, task.ID, "usage", json.RawMessage(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Heartbeat(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	rt := newRouter()
	rt.script("died twice priced", withUsage(answer("taken over"), perCall))
	svc := runnertest.Start(t, runnertest.Options{Store: st, Now: clk.Now, Provider: rt, Settings: pricedSettings(), Configure: pricedModels(rt)})
	clk.Advance(2 * time.Minute)
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != svc.Node() {
		t.Fatalf("dead node's task: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	wantSpend(t, "after the take-over", done.Result, "fake/big", 3, true)
	// Its scratch directory died with the node, and the events say so.
	if evs := runnertest.Events(t, svc, task.ID, "scratch_not_moved"); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), "node dead-node stopped responding") {
		t.Fatalf("scratch_not_moved events = %v", evs)
	}
}
