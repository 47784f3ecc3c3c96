package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestPruneConformance runs retention's store part on SQLite and
// Postgres (a suite of its own beside TestConformance's list, which other
// slices extend).
func TestPruneConformance(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			t.Run("Prune", func(t *testing.T) { testPrune(t, open) })
			t.Run("GCTasks", func(t *testing.T) { testGCTasks(t, open) })
		})
	}
}

// testPrune: an old finished task loses its per-step history and keeps its
// row, result, spend, state changes, report, approvals and their audit; a
// running task and a recent one are not touched; a task continued after
// its pruning is pruned again once its new end is old.
func testPrune(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := open(t, store.Config{Now: clock})
	const retain = 90 * 24 * time.Hour

	run := func(id string) {
		t.Helper()
		if _, err := s.SetTaskState(ctx, id, []store.State{store.StateQueued}, store.StateRunning, nil); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(id string, st store.State) {
		t.Helper()
		if _, err := s.SetTaskState(ctx, id, []store.State{store.StateRunning}, st,
			&store.StateOpts{Result: &store.Result{Summary: "did it", Cost: 0.25, CostComplete: true},
				Events: []store.EventInput{{Type: "final_report", Payload: []byte(`{"summary":"did it"}`)},
					{Type: "task_state", Payload: []byte(`{"state":"` + string(st) + `"}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	steps := func(id string, n int) {
		t.Helper()
		for i := range n {
			if _, err := s.AppendEvents(ctx, id,
				store.EventInput{Type: "tool_started", Payload: []byte(`{"tool":"bash","args":"go test ./..."}`)},
				store.EventInput{Type: "usage", Payload: []byte(`{"model":"m","prompt":10,"completion":5,"cost":0.01}`)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessages(ctx, id, agent.Message{Role: agent.RoleUser, Content: "step"}); err != nil {
				t.Fatal(err)
			}
			if err := s.JournalStart(ctx, id, "call-"+string(rune('a'+i)), "bash", "h", `{"command":"go test"}`); err != nil {
				t.Fatal(err)
			}
		}
	}

	old := mustCreate(t, s, newTask("old"), "")
	running := mustCreate(t, s, newTask("running"), "")
	run(old.ID)
	run(running.ID)
	steps(old.ID, 3)
	steps(running.ID, 1)
	appr, err := s.CreateApproval(ctx, store.NewApproval{TaskID: old.ID, Tool: "bash", Subject: "rm x", CallHash: "h1",
		Preview: "rm x", Requester: "slack:U1", ExpiresAt: clock().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DecideApproval(ctx, appr.ID, store.AllowOnce, "slack:U2", "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostMessage(ctx, old.ID, "slack:U1", "also fix the docs"); err != nil {
		t.Fatal(err)
	}
	finish(old.ID, store.StateSucceeded)
	usageBefore, _ := s.EventsOfType(ctx, old.ID, "usage")
	statesBefore, _ := s.EventsOfType(ctx, old.ID, "task_state")

	advance(retain + time.Hour)
	recent := mustCreate(t, s, newTask("recent"), "")
	run(recent.ID)
	steps(recent.ID, 1)
	finish(recent.ID, store.StateFailed)

	cut := clock().Add(-retain)
	list, err := s.PrunableTasks(ctx, cut, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != old.ID {
		t.Fatalf("prunable = %+v; want only the old finished task", list)
	}
	got := list[0]
	// 3 tool_started (usage, task_state and final_report stay), 3
	// messages, 3 journal rows, 1 inbox message.
	if got.Events != 3 || got.Messages != 3 || got.Journal != 3 || got.Other != 1 || got.Bytes <= 0 || got.State != store.StateSucceeded {
		t.Fatalf("prunable old task = %+v", got)
	}
	if page, err := s.PrunableTasks(ctx, cut, &got, 10); err != nil || len(page) != 0 {
		t.Fatalf("the page after the last = %+v, %v", page, err)
	}

	pruned, rows, err := s.PruneTasks(ctx, []string{old.ID, running.ID, recent.ID}, cut)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pruned, []string{old.ID}) || rows != got.Rows() {
		t.Fatalf("pruned %v, %d rows; want [%s], %d", pruned, rows, old.ID, got.Rows())
	}

	// What went.
	if msgs, err := s.Messages(ctx, old.ID); err != nil || len(msgs) != 0 {
		t.Errorf("messages after pruning = %d, %v", len(msgs), err)
	}
	if evs, err := s.EventsOfType(ctx, old.ID, "tool_started"); err != nil || len(evs) != 0 {
		t.Errorf("tool events after pruning = %d, %v", len(evs), err)
	}
	if j, err := s.Journal(ctx, old.ID); err != nil || len(j) != 0 {
		t.Errorf("journal after pruning = %d, %v", len(j), err)
	}
	// What stayed.
	task, err := s.Task(ctx, old.ID)
	if err != nil || task.State != store.StateSucceeded || task.Result == nil || task.Result.Summary != "did it" || task.Result.Cost != 0.25 {
		t.Fatalf("task after pruning = %+v, %v", task, err)
	}
	for typ, want := range map[string]int{"usage": len(usageBefore), "task_state": len(statesBefore), "final_report": 1} {
		if evs, err := s.EventsOfType(ctx, old.ID, typ); err != nil || len(evs) != want || want == 0 {
			t.Errorf("%s events after pruning = %d (want %d), %v", typ, len(evs), want, err)
		}
	}
	if a, err := s.Approval(ctx, appr.ID); err != nil || a.Decision != store.AllowOnce {
		t.Errorf("approval after pruning = %+v, %v", a, err)
	}
	if audit, err := s.ApprovalAudit(ctx, appr.ID); err != nil || len(audit) < 2 {
		t.Errorf("approval audit after pruning = %+v, %v", audit, err)
	}
	// The others were not touched.
	for _, id := range []string{running.ID, recent.ID} {
		if msgs, err := s.Messages(ctx, id); err != nil || len(msgs) != 1 {
			t.Errorf("messages of %s = %d, %v; want 1", id, len(msgs), err)
		}
	}
	if list, err := s.PrunableTasks(ctx, cut, nil, 10); err != nil || len(list) != 0 {
		t.Fatalf("prunable after pruning = %+v, %v", list, err)
	}
	// Pruning again finds nothing to mark.
	if again, _, err := s.PruneTasks(ctx, []string{old.ID}, cut); err != nil || len(again) != 1 {
		// It is still finished and old: marking it again is harmless,
		// and it deletes nothing.
		t.Fatalf("prune again = %v, %v", again, err)
	}

	// Continued: its new history is pruned once its new end is old.
	advance(time.Minute)
	if _, err := s.SetTaskState(ctx, old.ID, []store.State{store.StateSucceeded}, store.StateQueued, nil); err != nil {
		t.Fatal(err)
	}
	run(old.ID)
	if list, err := s.PrunableTasks(ctx, clock(), nil, 10); err != nil || slices.ContainsFunc(list, func(p store.PrunableTask) bool { return p.ID == old.ID }) {
		t.Fatalf("a running continuation is prunable: %+v, %v", list, err)
	}
	steps(old.ID, 1)
	finish(old.ID, store.StateSucceeded)
	advance(retain + time.Hour)
	list, err = s.PrunableTasks(ctx, clock().Add(-retain), nil, 10)
	if err != nil || len(list) != 2 || list[0].ID != recent.ID || list[1].ID != old.ID || list[1].Messages != 1 {
		t.Fatalf("prunable after the continuation = %+v, %v", list, err)
	}
	first, err := s.PrunableTasks(ctx, clock().Add(-retain), nil, 1)
	if err != nil || len(first) != 1 || first[0].ID != recent.ID {
		t.Fatalf("first page = %+v, %v", first, err)
	}
	if next, err := s.PrunableTasks(ctx, clock().Add(-retain), &first[0], 1); err != nil || len(next) != 1 || next[0].ID != old.ID {
		t.Fatalf("second page = %+v, %v", next, err)
	}
}

// testGCTasks: a task's state, end and published commit, for the ids
// asked about that exist.
func testGCTasks(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	pub := mustCreate(t, s, newTask("published"), "")
	plain := mustCreate(t, s, newTask("plain"), "")
	for _, id := range []string{pub.ID, plain.ID} {
		if _, err := s.SetTaskState(ctx, id, []store.State{store.StateQueued}, store.StateRunning, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := s.EnqueuePublish(ctx, pub.ID, "repo", "reasonix/"+pub.ID, "c1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GCTasks(ctx, []string{pub.ID, plain.ID, "no-such-task"})
	if err != nil || len(got) != 2 || got[pub.ID].Published != "" || !got[plain.ID].FinishedAt.IsZero() || got[plain.ID].State != store.StateRunning {
		t.Fatalf("gc tasks while pending = %+v, %v", got, err)
	}
	rec, err = s.ClaimPublish(ctx, pub.ID, "n", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rec.State = store.PublishPushed
	if err := s.AdvancePublish(ctx, rec, "n", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetTaskState(ctx, pub.ID, []store.State{store.StateRunning}, store.StateSucceeded, nil); err != nil {
		t.Fatal(err)
	}
	got, err = s.GCTasks(ctx, []string{pub.ID})
	if err != nil || got[pub.ID].Published != "c1" || got[pub.ID].State != store.StateSucceeded || got[pub.ID].FinishedAt.IsZero() {
		t.Fatalf("gc tasks once pushed = %+v, %v", got, err)
	}
}
