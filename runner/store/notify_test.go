package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"

	"github.com/jackc/pgx/v5"
)

// TestPostgresQueueNeedsNoPoll: on Postgres a new task and a woken parked
// one both start long before the next poll, because inserts and wakes
// notify the queue.
func TestPostgresQueueNeedsNoPoll(t *testing.T) {
	ctx := context.Background()
	s := storetest.Postgres(t, store.Config{})
	started := make(chan string, 4)
	release := make(chan struct{})
	q, err := s.NewQueue(store.QueueConfig{
		MaxWorkers:   2,
		PollInterval: 30 * time.Second,
		WakeInterval: 30 * time.Second,
		Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
			started <- job.TaskID
			n, _ := s.Task(ctx, job.TaskID)
			switch {
			case n.Prompt == "probe":
				// It holds its worker to the end: its end would notify the
				// queue of a freed worker, a fetch this test does not want.
				select {
				case <-release:
				case <-ctx.Done():
				}
			case n.Prompt == "park" && job.Attempt == 1 && n.State == store.StateQueued:
				if _, err := s.SetTaskState(ctx, job.TaskID, []store.State{store.StateQueued}, store.StateWaitingApproval, nil); err != nil {
					return err
				}
				return store.Snooze(time.Hour)
			}
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
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
	// A task there before the queue starts is run by the queue's first
	// fetch: once it runs, that fetch has passed, and only a notification
	// can start another task before the next poll.
	probe := mustCreate(t, s, newTask("probe"), "")
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	t.Cleanup(func() { close(release) }) // runs first: Stop waits for the probe
	wait(probe.ID, "a task inserted before the start")

	task := mustCreate(t, s, newTask("park"), "")
	wait(task.ID, "a new task")
	eventually.NoError(t, 0, func() error {
		if state, err := s.JobStateForTest(ctx, task.JobID); err != nil || state != "scheduled" {
			return fmt.Errorf("the parked task's job is %q (%v), not yet scheduled", state, err)
		}
		return nil
	})
	if err := s.Wake(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	wait(task.ID, "a woken task")
}

// TestPostgresQueueNotifiesFreedWorker: after a job ends, the queue tells
// the nodes' queues (River's insert notification) that a job may be
// waiting. River fetches for a freed worker only when its last fetch came
// back full, and not for one freed while a fetch was under way: in the
// multi-node benchmark such workers sat idle for up to 0.77 s, until the
// next poll, with tasks waiting (27–36 ms at most with the notice).
func TestPostgresQueueNotifiesFreedWorker(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := store.Open(ctx, store.Config{Driver: store.DriverPostgres, DSN: dsn, Logger: storetest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	listener, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close(context.Background()) })
	var schema string
	if err := listener.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if _, err := listener.Exec(ctx, `LISTEN "`+schema+`.river_insert"`); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	q, err := s.NewQueue(store.QueueConfig{
		MaxWorkers:   1,
		PollInterval: 30 * time.Second,
		WakeInterval: 30 * time.Second,
		Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
			ended <- time.Now()
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
	mustCreate(t, s, newTask("one job"), "")
	var end time.Time
	select {
	case end = <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not run")
	}
	// One notification is the insert's; the one wanted follows the end.
	deadline, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for got := 0; ; {
		n, err := listener.WaitForNotification(deadline)
		if err != nil {
			t.Fatalf("%d notification(s) by 2 s after the job ended, want the insert's and the freed worker's: %v", got, err)
		}
		if strings.Contains(n.Payload, `"queue"`) {
			if got++; got == 2 {
				t.Logf("notified %s after the job ended", time.Since(end))
				return
			}
		}
	}
}
