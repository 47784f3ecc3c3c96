package runner_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestGoalNestedFleetCountersAndMetrics: a goal's child delegates once
// more (depth 2). The task keeps each child's capsule and lineage, the
// final report carries the ten delegation counters, and /metrics adds
// them up.
func TestGoalNestedFleetCountersAndMetrics(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	rt.script("Objective: nest the work",
		append([]agenttest.Turn{calls(call("t1", "task", map[string]any{"prompt": "child: delegate the look"}))},
			endGoal("complete", map[string]any{"summary": "Nested."}, "Done.", nil)...)...)
	rt.script("child: delegate the look", calls(call("t2", "task", map[string]any{"prompt": "grandchild: look"})), answer("child done"))
	rt.script("grandchild: look", answer("grandchild looked"))
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "nest the work", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	counters, _ := finalReport(t, svc, task.ID)["counters"].(map[string]any)
	if counters["subagent_runs"] != float64(2) || counters["subagent_nested_runs"] != float64(1) || counters["completions_prose_only"] != float64(2) {
		t.Fatalf("counters in the final report = %v", counters)
	}
	_, children := goalDoc(t, st, task.ID)
	var grand map[string]any
	for _, c := range children {
		if c["depth"] == float64(2) {
			grand = c
		}
	}
	capsule, _ := grand["capsule"].(map[string]any)
	if grand == nil || grand["parent"] == "" || capsule == nil || capsule["depth"] != float64(2) || capsule["parent"] != grand["parent"] {
		t.Fatalf("the grandchild's stored record = %v", grand)
	}
	metrics := scrape(t, svc)
	for counter, want := range map[string]int{"subagent_runs": 2, "subagent_nested_runs": 1, "false_completions": 0, "duplicate_work_paths": 0} {
		if line := fmt.Sprintf("reasonix_delegation_total{counter=%q} %d\n", counter, want); !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// TestGoalAblateSubagentTaskOption: a goal submitted with ablate
// "subagent" runs as the control arm: its turns are offered no task or
// fleet tool, and the task says which arm it was.
func TestGoalAblateSubagentTaskOption(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	var mu sync.Mutex
	offered := map[string]bool{}
	rt.script("Objective: work alone", endGoal("complete", map[string]any{"summary": "Alone."}, "Done.", func(req agenttest.Request) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range req.Tools {
			offered[s.Name] = true
		}
	})...)
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	if _, _, err := svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "x", Ablate: "other"}); err == nil {
		t.Fatal("an unknown ablate arm was accepted")
	}
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "work alone", Goal: true, Posture: "auto", Ablate: "subagent"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded || done.Ablate != store.AblateSubagent {
		t.Fatalf("task = %s ablate %q %+v", done.State, done.Ablate, done.Result)
	}
	mu.Lock()
	defer mu.Unlock()
	if offered["task"] || offered["fleet"] || !offered["update_goal"] {
		t.Fatalf("the control arm was offered %v", offered)
	}
}
