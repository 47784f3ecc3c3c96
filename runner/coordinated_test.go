package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// startCoordinated starts a service whose [agent] planner_model is a
// scripted planner of its own beside the scripted executor.
func startCoordinated(t *testing.T, planner, executor *agenttest.ScriptedProvider) (*runner.Service, *string) {
	t.Helper()
	set := settings(1)
	set.Agent.PlannerModel = "plan-model"
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Settings: set, Configure: func(c *runner.Config) {
		scratch = c.ScratchDir
		c.Providers = func(ref string) (session.Model, error) {
			if ref == "plan-model" {
				return session.Model{Provider: planner, Name: "plan-model"}, nil
			}
			return session.Model{Provider: executor, Name: "exec-model"}, nil
		}
	}})
	return svc, &scratch
}

func phaseDetails(t *testing.T, svc *runner.Service, id string) []session.PhaseDetail {
	t.Helper()
	var out []session.PhaseDetail
	for _, e := range runnertest.Events(t, svc, id, "phase_detail") {
		var d session.PhaseDetail
		if err := json.Unmarshal(e.Payload, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestTaskPlanOnlyThenContinued: a plan-only request gets the planner's
// plan as its answer, no executor request and no tool; the planner's
// tokens are the task's. A later "go ahead" continues the conversation
// from the persisted plan and the executor carries it out.
func TestTaskPlanOnlyThenContinued(t *testing.T) {
	ctx := context.Background()
	planner := agenttest.NewScriptedProvider(answer("1. write notes.txt"))
	executor := agenttest.NewScriptedProvider(
		calls(call("w1", "write_file", map[string]string{"path": "notes.txt", "content": "n\n"})), answer("wrote it"))
	svc, scratch := startCoordinated(t, planner, executor)
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root",
		Prompt: "Set up the release notes file for the next version, plan only", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.FinalAnswer != "1. write notes.txt" {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if n := len(executor.Requests()); n != 0 {
		t.Fatalf("the executor was asked %d times on a plan-only turn", n)
	}
	if done.Result.Tokens.Prompt != 100 || done.Result.Models["scripted/plan-model"].Calls != 1 {
		t.Fatalf("the planner's usage is not the task's: %+v", done.Result)
	}
	if d := phaseDetails(t, svc, task.ID); len(d) != 1 || d[0].Route != session.RoutePlanOnly || d[0].Planner != "planned" {
		t.Fatalf("phase_detail = %+v", d)
	}
	if len(runnertest.Events(t, svc, task.ID, "tool_started")) != 0 {
		t.Fatal("a tool ran on a plan-only turn")
	}

	if _, err := svc.Message(ctx, task.ID, runner.Principal{ID: "token:root", Role: store.RoleSubmit}, "go ahead"); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 0, func() bool { return len(executor.Requests()) == 2 }, "the continuation did not reach the executor")
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	msgs := executor.Requests()[0].Messages
	if len(msgs) != 4 || msgs[2].Role != agent.RoleAssistant || msgs[2].Content != "1. write notes.txt" || msgs[3].Content != "go ahead" {
		t.Fatalf("the executor's conversation %+v", msgs)
	}
	if _, err := os.Stat(filepath.Join(*scratch, task.ID, "notes.txt")); err != nil {
		t.Fatalf("the plan was not carried out: %v", err)
	}
}

// TestTaskPlanForApproval: a request to wait for approval turns the
// planner's plan into the task's plan approval; nothing executes until an
// approver allows it, then the executor carries out the approved plan.
// Nobody can approve a webhook task's plan: it ends blocked, unattended.
func TestTaskPlanForApproval(t *testing.T) {
	ctx := context.Background()
	planner := agenttest.NewScriptedProvider(answer("1. write sched.txt"), answer("1. rewrite it all"))
	executor := agenttest.NewScriptedProvider(
		calls(call("w1", "write_file", map[string]string{"path": "sched.txt", "content": "s\n"})), answer("done"))
	svc, scratch := startCoordinated(t, planner, executor)
	text := "Rewrite the scheduler and wait for my approval before you change code"
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: text, Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if ap.Tool != "plan" || !contains(ap.Preview, "1. write sched.txt") {
		t.Fatalf("approval = %+v", ap)
	}
	if len(executor.Requests()) != 0 {
		t.Fatal("the executor ran before the plan was approved")
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", CallHash: ap.CallHash, Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.FinalAnswer != "done" {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	msgs := executor.Requests()[0].Messages
	if last := msgs[len(msgs)-1]; msgs[len(msgs)-2].Content != "1. write sched.txt" || !contains(last.Content, "The plan above is approved") {
		t.Fatalf("the executor's conversation %+v", msgs)
	}
	if _, err := os.Stat(filepath.Join(*scratch, task.ID, "sched.txt")); err != nil {
		t.Fatalf("the approved plan was not carried out: %v", err)
	}

	hook, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceWebhook, Requester: "webhook:ci", Prompt: text, Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	end := runnertest.WaitState(t, svc, hook.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateWaitingApproval)
	if end.State != store.StateBlocked || end.Result.Error != "unattended" || end.Result.FinalAnswer != "1. rewrite it all" {
		t.Fatalf("webhook task = %s %+v", end.State, end.Result)
	}
	if len(executor.Requests()) != 2 {
		t.Fatal("the executor ran an unapproved plan")
	}
}

// TestTaskPlanOnlyOption: plan_only makes the first turn plan-only even
// though the text asks for the work itself; the plan is the answer and
// nothing executes; a message continues it and the executor carries it
// out. Without a planner, or with goal, plan_only is refused at submit.
func TestTaskPlanOnlyOption(t *testing.T) {
	ctx := context.Background()
	planner := agenttest.NewScriptedProvider(answer("1. write notes.txt"))
	executor := agenttest.NewScriptedProvider(
		calls(call("w1", "write_file", map[string]string{"path": "notes.txt", "content": "n\n"})), answer("wrote it"))
	svc, scratch := startCoordinated(t, planner, executor)
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root",
		Prompt: "Write notes.txt for the release", Posture: "auto", PlanOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !done.PlanOnly || done.Result.FinalAnswer != "1. write notes.txt" || len(executor.Requests()) != 0 {
		t.Fatalf("task = %s plan_only %v %+v; executor asked %d times", done.State, done.PlanOnly, done.Result, len(executor.Requests()))
	}
	if d := phaseDetails(t, svc, task.ID); len(d) != 1 || d[0].Route != session.RoutePlanOnly {
		t.Fatalf("phase_detail = %+v", d)
	}
	if _, err := svc.Message(ctx, task.ID, runner.Principal{ID: "token:root", Role: store.RoleSubmit}, "go ahead"); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 0, func() bool { return len(executor.Requests()) == 2 }, "the continuation did not reach the executor")
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	if _, err := os.Stat(filepath.Join(*scratch, task.ID, "notes.txt")); err != nil {
		t.Fatalf("the plan was not carried out: %v", err)
	}

	if _, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "x", PlanOnly: true, Goal: true}); err == nil {
		t.Error("plan_only with goal was accepted")
	}
	plain := runnertest.Start(t, runnertest.Options{Provider: agenttest.NewScriptedProvider(answer("done")), Settings: settings(1)})
	if _, _, err := plain.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "x", PlanOnly: true}); err == nil || !strings.Contains(err.Error(), "planner_model") {
		t.Errorf("plan_only without a planner: %v", err)
	}
}
