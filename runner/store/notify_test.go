package store_test

import (
	"context"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestPostgresQueueNeedsNoPoll: on Postgres a new task and a woken parked
// one both start long before the next poll, because inserts and wakes
// notify the queue.
func TestPostgresQueueNeedsNoPoll(t *testing.T) {
	ctx := context.Background()
	s := storetest.Postgres(t, store.Config{})
	started := make(chan string, 4)
	q, err := s.NewQueue(store.QueueConfig{
		MaxWorkers:   2,
		PollInterval: 30 * time.Second,
		WakeInterval: 30 * time.Second,
		Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
			started <- job.TaskID
			if job.Attempt == 1 {
				if n, _ := s.Task(ctx, job.TaskID); n.Prompt == "park" && n.State == store.StateQueued {
					if _, err := s.SetTaskState(ctx, job.TaskID, []store.State{store.StateQueued}, store.StateWaitingApproval, nil); err != nil {
						return err
					}
					return store.Snooze(time.Hour)
				}
			}
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	// Let the queue's first fetch pass, so only a notification can help.
	time.Sleep(time.Second)
	wait := func(id, what string) {
		t.Helper()
		select {
		case got := <-started:
			if got != id {
				t.Fatalf("%s: started %s, want %s", what, got, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not started within 5s (the poll is 30s)", what)
		}
	}
	task := mustCreate(t, s, newTask("park"), "")
	wait(task.ID, "a new task")
	time.Sleep(500 * time.Millisecond) // parked
	if err := s.Wake(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	wait(task.ID, "a woken task")
}
