package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestRequeueStale: a dead node's task is queued again once — only while
// it still runs on that node with a heartbeat older than the cutoff — on
// both databases.
func TestRequeueStale(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			s := open(t, store.Config{Now: clk.Now})
			task := mustCreate(t, s, newTask("stale"), "")
			dead := "dead-node"
			if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &dead}); err != nil {
				t.Fatal(err)
			}
			if err := s.Heartbeat(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			beat := clk.Now()
			if _, err := s.RequeueStale(ctx, task.ID, dead, beat.Add(-time.Second)); !errors.Is(err, store.ErrStateConflict) {
				t.Fatalf("a fresh heartbeat was taken over: %v", err)
			}
			if _, err := s.RequeueStale(ctx, task.ID, "someone-else", beat.Add(time.Minute)); !errors.Is(err, store.ErrStateConflict) {
				t.Fatalf("another node's lease was taken over: %v", err)
			}
			clk.Advance(time.Minute)
			got, err := s.RequeueStale(ctx, task.ID, dead, clk.Now().Add(-30*time.Second))
			if err != nil || got.State != store.StateQueued || got.JobID == task.JobID {
				t.Fatalf("take-over: %+v %v", got, err)
			}
			if _, err := s.RequeueStale(ctx, task.ID, dead, clk.Now()); !errors.Is(err, store.ErrStateConflict) {
				t.Fatalf("taken over twice: %v", err)
			}
		})
	}
}
