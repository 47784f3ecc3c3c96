package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// slotGap submits two tasks of a workspace with max_parallel = 1 and
// returns how long the second waited after the first stopped running:
// from the first's terminal task_state event to the second's running one.
func slotGap(t testing.TB, svc *runner.Service, seq *atomic.Int64) time.Duration {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for range 2 {
		task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI,
			Prompt: fmt.Sprint("slot", seq.Add(1)), Workspace: "repo", Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	for _, id := range ids {
		if done := runnertest.WaitState(t, svc, id, 2*time.Minute, store.StateSucceeded, store.StateFailed); done.State != store.StateSucceeded {
			t.Fatalf("task %s = %s %+v", id, done.State, done.Result)
		}
	}
	// Which ran first is the queue's choice.
	first, second := stateTimes(t, svc, ids[0]), stateTimes(t, svc, ids[1])
	if second.running.Before(first.running) {
		first, second = second, first
	}
	if second.running.Before(first.ended) {
		t.Fatalf("the tasks ran at once under max_parallel = 1: %+v %+v", first, second)
	}
	return second.running.Sub(first.ended)
}

type runSpan struct{ running, ended time.Time }

func stateTimes(t testing.TB, svc *runner.Service, id string) runSpan {
	t.Helper()
	var span runSpan
	for _, ev := range runnertest.Events(t, svc, id, "task_state") {
		var p struct{ State store.State }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		switch {
		case p.State == store.StateRunning && span.running.IsZero():
			span.running = ev.Time
		case p.State.Terminal():
			span.ended = ev.Time
		}
	}
	if span.running.IsZero() || span.ended.IsZero() {
		t.Fatalf("task %s: no running or no end in its task_state events", id)
	}
	return span
}

func slotService(t testing.TB) *runner.Service {
	repo := gitRepo(t)
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := settings(4)
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main", MaxParallel: 1}}
	return runnertest.Start(t, runnertest.Options{Provider: slowModel{}, Settings: set,
		Configure: func(c *runner.Config) {
			c.Workspaces = runner.NewWorkspaces(wm)
			// Long enough that only the wake can start the waiting task
			// within the test's bound.
			c.SlotRetry = time.Minute
		}})
}

// TestFreedWorkspaceSlotWakesTheNextTask: with max_parallel = 1 the second
// task parks while the first runs; the first's end wakes it. Its parked
// job would otherwise sleep out its minute-long retry, so a gap under 7 s (the
// first task takes about a second; loaded machines get the rest) shows
// the wake.
func TestFreedWorkspaceSlotWakesTheNextTask(t *testing.T) {
	svc := slotService(t)
	var seq atomic.Int64
	if gap := slotGap(t, svc, &seq); gap > 7*time.Second {
		t.Errorf("the second task started %v after the first ended; the freed slot did not wake it", gap)
	}
}

// BenchmarkWorkspaceSlotGap reports the median time a freed workspace slot
// sits idle while a task waits for it (max_parallel = 1, two tasks).
func BenchmarkWorkspaceSlotGap(b *testing.B) {
	svc := slotService(b)
	var seq atomic.Int64
	var gaps []float64
	for b.Loop() {
		gaps = append(gaps, float64(slotGap(b, svc, &seq).Microseconds())/1000)
	}
	b.ReportMetric(medianOf(gaps), "gap-ms")
}
