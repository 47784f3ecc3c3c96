package runner_test

import (
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestHistoryTools: a task finds its requester's past task by words of its
// answer (history), lists it (list_sessions) and reads it (read_session);
// another requester's task finds, lists and reads none of it.
func TestHistoryTools(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		answer("The race was in the claim loop; fixed with a lease."),
		calls(call("h1", "history", map[string]any{"query": "claim loop race"}), call("l1", "list_sessions", map[string]any{})),
		answer("found it"),
		calls(call("h2", "history", map[string]any{"query": "claim loop race"}), call("l2", "list_sessions", map[string]any{})),
		answer("nothing"),
	)
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1)})
	first := submit(t, svc, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "fix the flaky queue test", Posture: "auto"})
	if first.State != store.StateSucceeded {
		t.Fatalf("first = %s", first.State)
	}
	submit(t, svc, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "what did we learn about the queue?", Posture: "auto"})
	if res := toolResult(p, "h1"); !strings.HasPrefix(res, first.ID+" ") || !strings.Contains(res, "claim loop") {
		t.Errorf("alice's history = %q", res)
	}
	if res := toolResult(p, "l1"); !strings.Contains(res, first.ID) || strings.Contains(res, "what did we learn") {
		t.Errorf("alice's list_sessions = %q (want the first task, not itself)", res)
	}
	submit(t, svc, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:bob", Prompt: "what did alice learn?", Posture: "auto"})
	if res := toolResult(p, "h2"); !strings.Contains(res, "No past task matches") {
		t.Errorf("bob's history = %q", res)
	}
	if res := toolResult(p, "l2"); strings.Contains(res, first.ID) {
		t.Errorf("bob's list_sessions = %q", res)
	}
}
