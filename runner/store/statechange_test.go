package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestStateChangeCarriesTheRunsEnd: the options a run's end passes with its
// state change do what the separate calls did. InboxWaiting reports an
// untaken message as the change leaves the task (and none once taken);
// Checkpoint marks the task's journaled calls, and only the task's, even
// when the change itself is refused; entering running stamps the
// heartbeat, so an earlier attempt's stamp does not make it look stale.
func TestStateChangeCarriesTheRunsEnd(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now()
			s := open(t, store.Config{Now: func() time.Time { return now }})
			task := mustCreate(t, s, newTask("ends"), "")
			other := mustCreate(t, s, newTask("other"), "")
			node := "node-a"
			if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &node}); err != nil {
				t.Fatal(err)
			}
			beat := func() time.Time {
				t.Helper()
				running, err := s.RunningTasks(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range running {
					if r.ID == task.ID {
						return r.HeartbeatAt
					}
				}
				t.Fatalf("task %s not running", task.ID)
				return time.Time{}
			}
			if got := beat(); !got.Equal(now.Truncate(time.Microsecond)) {
				t.Fatalf("heartbeat after the claim: %v; want %v", got, now)
			}
			for _, id := range []string{task.ID, other.ID} {
				if err := s.JournalStart(ctx, id, "c1", "write_file", "h", `{}`); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.PostMessage(ctx, task.ID, "api:a", "one more thing"); err != nil {
				t.Fatal(err)
			}
			waiting := false
			done, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded,
				&store.StateOpts{Events: []store.EventInput{{Type: "task_state"}}, Checkpoint: true, InboxWaiting: &waiting})
			if err != nil || done.State != store.StateSucceeded {
				t.Fatalf("end: %+v, %v", done, err)
			}
			if !waiting {
				t.Error("InboxWaiting: false with a message waiting")
			}
			lost := func(id string) int {
				es, err := s.UncheckpointedCalls(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return len(es)
			}
			if lost(task.ID) != 0 || lost(other.ID) != 1 {
				t.Errorf("after Checkpoint: %d of the task's calls and %d of the other's unmarked; want 0, 1", lost(task.ID), lost(other.ID))
			}

			// A later attempt: the heartbeat moves with the claim.
			now = now.Add(time.Hour)
			if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateSucceeded}, store.StateRunning, nil); err != nil {
				t.Fatal(err)
			}
			if got := beat(); !got.Equal(now.Truncate(time.Microsecond)) {
				t.Fatalf("heartbeat after the second claim: %v; want %v", got, now)
			}
			if _, err := s.TakeInbox(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.JournalStart(ctx, task.ID, "c2", "write_file", "h", `{}`); err != nil {
				t.Fatal(err)
			}
			// A refused change (the task is not queued) still marks, as
			// the commit it records was made; and reads no inbox.
			waiting = true
			_, err = s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateFailed,
				&store.StateOpts{Checkpoint: true, InboxWaiting: &waiting})
			if !errors.Is(err, store.ErrStateConflict) {
				t.Fatalf("refused change: %v; want ErrStateConflict", err)
			}
			if lost(task.ID) != 0 {
				t.Errorf("after a refused change with Checkpoint: %d calls unmarked; want 0", lost(task.ID))
			}
			waiting = false
			if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded,
				&store.StateOpts{InboxWaiting: &waiting}); err != nil {
				t.Fatal(err)
			}
			if waiting {
				t.Error("InboxWaiting: true with the inbox taken")
			}
		})
	}
}
