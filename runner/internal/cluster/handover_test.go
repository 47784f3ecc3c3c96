package cluster

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"reasonix/runner/store"
)

// fakeTasks is a HandOverStore over a map of tasks, recording requeues.
type fakeTasks struct {
	tasks    map[string]store.Task
	running  []store.RunningTask
	requeued []string
	// parked tasks (listed by ListTasks) whose job is still running, the
	// nodes, and the tasks given a new job.
	parked  []store.Task
	stuck   map[string]bool
	nodes   []store.Node
	renewed []string
	listed  int // ListTasks calls
}

func (f *fakeTasks) Task(_ context.Context, id string) (store.Task, error) {
	t, ok := f.tasks[id]
	if !ok {
		return store.Task{}, store.ErrNotFound
	}
	return t, nil
}

func (f *fakeTasks) Requeue(_ context.Context, id string, _ []store.State, _ ...store.EventInput) (store.Task, error) {
	f.requeued = append(f.requeued, id)
	return f.tasks[id], nil
}

func (f *fakeTasks) RequeueStale(_ context.Context, id, _ string, _ time.Time, _ ...store.EventInput) (store.Task, error) {
	f.requeued = append(f.requeued, id)
	return f.tasks[id], nil
}

func (f *fakeTasks) RunningTasks(context.Context) ([]store.RunningTask, error) { return f.running, nil }

func (f *fakeTasks) ListTasks(context.Context, store.TaskFilter) (store.TaskPage, error) {
	f.listed++
	return store.TaskPage{Tasks: f.parked}, nil
}

func (f *fakeTasks) JobRunning(_ context.Context, id string) (bool, error) { return f.stuck[id], nil }

func (f *fakeTasks) RenewJob(_ context.Context, id string, _ store.State) error {
	f.renewed = append(f.renewed, id)
	return nil
}

func (f *fakeTasks) Nodes(context.Context) ([]store.Node, error) { return f.nodes, nil }

func (f *fakeTasks) UnfinishedCalls(context.Context, string) ([]store.JournalEntry, error) {
	return nil, nil
}

// eventLog records the events announced, by type.
type eventLog struct{ types []string }

func (e *eventLog) Emit(_ context.Context, _, typ string, _ any) { e.types = append(e.types, typ) }

func (e *eventLog) Announce(_ string, evs ...Event) []store.EventInput {
	out := make([]store.EventInput, 0, len(evs))
	for _, ev := range evs {
		e.types = append(e.types, ev.Type)
		out = append(out, store.EventInput{Type: ev.Type})
	}
	return out
}

// TestHandOverRequeuesUntilTooOften: a drained task goes back to the
// queue with its events and wakes its subscribers; one handed over
// MaxAutoResumes times already is interrupted instead, for a person to
// resume.
func TestHandOverRequeuesUntilTooOften(t *testing.T) {
	st := &fakeTasks{tasks: map[string]store.Task{
		"fresh": {ID: "fresh", Attempt: 1},
		"tired": {ID: "tired", Attempt: MaxAutoResumes},
	}}
	var ev eventLog
	var interrupted []string
	hub := NewHub()
	woken, stop := hub.Subscribe("fresh")
	defer stop()
	h := NewHandOver(HandOverConfig{Store: st, Node: "n1", StaleAfter: time.Minute, Events: &ev, Hub: hub,
		Interrupt: func(_ context.Context, id, _ string) { interrupted = append(interrupted, id) },
		LostState: func(_ context.Context, _ string, err error) error { return err },
	})
	for _, id := range []string{"fresh", "tired"} {
		if err := h.Requeue(t.Context(), id, "drained"); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(st.requeued, []string{"fresh"}) || !slices.Equal(interrupted, []string{"tired"}) {
		t.Fatalf("requeued %v, interrupted %v", st.requeued, interrupted)
	}
	if !slices.Equal(ev.types, []string{"task_released", "task_state"}) {
		t.Errorf("events %v", ev.types)
	}
	select {
	case <-woken:
	default:
		t.Error("the requeued task's subscribers were not woken")
	}
	if err := h.Requeue(t.Context(), "gone", "drained"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown task: %v", err)
	}
}

// TestRecoverTakesOverOnlyDeadNodesTasks: at start a node interrupts the
// tasks it was running itself, takes over those of a node silent for
// StaleAfter and leaves a live node's alone.
func TestRecoverTakesOverOnlyDeadNodesTasks(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st := &fakeTasks{
		tasks: map[string]store.Task{"mine": {ID: "mine"}, "dead": {ID: "dead"}, "alive": {ID: "alive"}},
		running: []store.RunningTask{
			{ID: "mine", LeaseOwner: "n1", HeartbeatAt: now},
			{ID: "dead", LeaseOwner: "n2", HeartbeatAt: now.Add(-2 * time.Minute)},
			{ID: "alive", LeaseOwner: "n3", HeartbeatAt: now.Add(-10 * time.Second)},
		},
	}
	var interrupted []string
	h := NewHandOver(HandOverConfig{Store: st, Node: "n1", StaleAfter: time.Minute, Events: &eventLog{}, Hub: NewHub(),
		Interrupt: func(_ context.Context, id, _ string) { interrupted = append(interrupted, id) },
		LostState: func(_ context.Context, _ string, err error) error { return err },
		Now:       func() time.Time { return now },
	})
	if err := h.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(interrupted, []string{"mine"}) || !slices.Equal(st.requeued, []string{"dead"}) {
		t.Fatalf("interrupted %v, requeued %v", interrupted, st.requeued)
	}
	if _, stale := h.StaleTask(t.Context(), "alive"); stale {
		t.Error("a live node's task counts as stale")
	}
}

// TestDeadNodesParkedTasksGetAJob: a node killed while its task waiting
// for CI read the checks (or before a parked job's snooze was recorded)
// leaves the job "running" where no wake reaches it. Another node gives
// such a task of a dead node a job again — a CI wait a new job in the same
// state, an approval's task a requeue — and leaves alone a live node's,
// a cleanly stopped node's, and a dead node's whose job is not stuck.
func TestDeadNodesParkedTasksGetAJob(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st := &fakeTasks{
		nodes: []store.Node{
			{ID: "n1", HeartbeatAt: now},
			{ID: "dead", HeartbeatAt: now.Add(-2 * time.Minute)},
			{ID: "alive", HeartbeatAt: now.Add(-10 * time.Second)},
			{ID: "stopped", State: store.NodeStopped, HeartbeatAt: now.Add(-time.Hour)},
		},
		parked: []store.Task{
			{ID: "ci", State: store.StateWaitingCI, LeaseOwner: "dead"},
			{ID: "approval", State: store.StateWaitingApproval, LeaseOwner: "dead"},
			{ID: "snoozed", State: store.StateWaitingCI, LeaseOwner: "dead"},
			{ID: "live", State: store.StateWaitingCI, LeaseOwner: "alive"},
			{ID: "drained", State: store.StateWaitingCI, LeaseOwner: "stopped"},
		},
		stuck: map[string]bool{"ci": true, "approval": true, "live": true, "drained": true},
	}
	h := NewHandOver(HandOverConfig{Store: st, Node: "n1", StaleAfter: time.Minute, Events: &eventLog{}, Hub: NewHub(),
		Interrupt: func(context.Context, string, string) {},
		LostState: func(_ context.Context, _ string, err error) error { return err },
		Now:       func() time.Time { return now },
	})
	if err := h.RecoverDeadNodesParked(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.renewed, []string{"ci"}) || !slices.Equal(st.requeued, []string{"approval"}) {
		t.Fatalf("renewed %v, requeued %v", st.renewed, st.requeued)
	}

	// With every node alive, only the node list is read.
	st.nodes, st.listed = []store.Node{st.nodes[0], st.nodes[2], st.nodes[3]}, 0
	if err := h.RecoverDeadNodesParked(t.Context()); err != nil || st.listed != 0 {
		t.Fatalf("all alive: %v, %d task listings", err, st.listed)
	}
}
