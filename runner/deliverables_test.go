package runner_test

import (
	"context"
	"encoding/json"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// The files a task declares with present are in its final report, its
// result and a deliverables event; a continuation that declares none keeps
// them.
func TestPresentedDeliverablesReachTheReport(t *testing.T) {
	ctx := context.Background()
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("w", "write_file", map[string]any{"path": "report.md", "content": "# findings\n"})}},
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("p", "present", map[string]any{"files": []map[string]string{{"path": "report.md", "description": "the findings"}}})}},
		answer("wrote the report"),
		answer("nothing more"),
	)
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1)})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "write a report", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	got := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed)
	want := []agent.Deliverable{{Path: "report.md", Description: "the findings", Bytes: 11}}
	if got.Result == nil || len(got.Result.Deliverables) != 1 || got.Result.Deliverables[0] != want[0] {
		t.Fatalf("result %+v", got.Result)
	}
	if evs := runnertest.Events(t, svc, task.ID, "deliverables"); len(evs) != 1 {
		t.Fatalf("%d deliverables events", len(evs))
	}
	reports := runnertest.Events(t, svc, task.ID, "final_report")
	var rep struct {
		Deliverables []agent.Deliverable `json:"deliverables"`
	}
	if len(reports) != 1 || json.Unmarshal(reports[0].Payload, &rep) != nil || len(rep.Deliverables) != 1 || rep.Deliverables[0] != want[0] {
		t.Fatalf("final report %s", reports[0].Payload)
	}
	if _, err := svc.Message(ctx, task.ID, runner.Principal{ID: "api:alice", Role: store.RoleAdmin}, "anything else?"); err != nil {
		t.Fatal(err)
	}
	got = runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	if got.Result == nil || len(got.Result.Deliverables) != 1 {
		t.Fatalf("the continuation lost the deliverables: %+v", got.Result)
	}
}
