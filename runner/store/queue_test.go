package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// run is one call of the handler.
type run struct {
	taskID  string
	attempt int
}

// TestQueueSnoozeWake: a snoozed job frees its worker (another task runs on
// the single worker meanwhile) and Wake runs it again long before its snooze
// would end — on both databases, with a real River client.
func TestQueueSnoozeWake(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testSnoozeWake(t, open, false) })
	}
}

// TestQueueWakeWhileRunning: a wake that lands while the job is still running
// (so River cannot retry it yet) is not lost: the task runs again as the
// job snoozes (TestWakeWhileRunningRunsANewJobAtOnce says how). The sweep interval is an hour here, so the
// sweeper, the fallback, cannot be what runs it.
func TestQueueWakeWhileRunning(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testSnoozeWake(t, open, true) })
	}
}

func testSnoozeWake(t *testing.T, open storetest.Opener, wakeWhileRunning bool) {
	ctx := context.Background()
	s := open(t, store.Config{})
	runs := make(chan run, 16)
	var mu sync.Mutex
	seen := map[string]int{}
	sweep := 50 * time.Millisecond
	if wakeWhileRunning {
		sweep = time.Hour
	}
	q, err := s.NewQueue(store.QueueConfig{
		MaxWorkers:   1,
		PollInterval: 20 * time.Millisecond,
		WakeInterval: sweep,
		Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
			mu.Lock()
			seen[job.TaskID]++
			n := seen[job.TaskID]
			mu.Unlock()
			runs <- run{job.TaskID, job.Attempt}
			task, err := s.Task(ctx, job.TaskID)
			if err != nil {
				return err
			}
			if task.Prompt == "park" && n == 1 {
				if wakeWhileRunning {
					if err := s.Wake(ctx, job.TaskID); err != nil {
						return err
					}
				}
				return store.Snooze(time.Hour)
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
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := q.Stop(stopCtx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()

	park := mustCreate(t, s, newTask("park"), "")
	want(t, runs, park.ID)

	if wakeWhileRunning {
		// No explicit wake after the snooze: only the recorded one.
		r := want(t, runs, park.ID)
		if r.attempt != 1 {
			t.Errorf("woken run attempt = %d, want 1 (snoozes do not count)", r.attempt)
		}
		return
	}

	waitJobState(t, s, park.JobID, "scheduled")
	other := mustCreate(t, s, newTask("quick"), "")
	want(t, runs, other.ID) // the only worker is free while park is snoozed
	waitJobState(t, s, other.JobID, "completed")
	select {
	case r := <-runs:
		t.Fatalf("unexpected run %+v before Wake", r)
	default:
	}
	if err := s.Wake(ctx, park.ID); err != nil {
		t.Fatal(err)
	}
	if r := want(t, runs, park.ID); r.attempt != 1 {
		t.Errorf("woken run attempt = %d, want 1 (snoozes do not count)", r.attempt)
	}
	waitJobState(t, s, park.JobID, "completed")
	// Waking a finished job must not revive it.
	if err := s.Wake(ctx, park.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.JobStateForTest(ctx, park.JobID); st != "completed" {
		t.Errorf("wake of a completed job moved it to %s", st)
	}
}

// want waits for the next handler run and checks it is taskID's. The bound is
// a failure deadline, not a timing assumption.
func want(t *testing.T, runs <-chan run, taskID string) run {
	t.Helper()
	select {
	case r := <-runs:
		if r.taskID != taskID {
			t.Fatalf("ran %s, want %s", r.taskID, taskID)
		}
		return r
	case <-time.After(15 * time.Second):
		t.Fatalf("task %s did not run", taskID)
	}
	return run{}
}

// waitJobState polls River's row until the job reaches state; River writes
// completions asynchronously, so there is no event to wait on instead.
func waitJobState(t *testing.T, s *store.Store, id int64, state string) {
	t.Helper()
	eventually.NoError(t, 0, func() error {
		st, err := s.JobStateForTest(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st != state {
			return fmt.Errorf("job %d is %s, want %s", id, st, state)
		}
		return nil
	})
}

func TestQueueConfigValidation(t *testing.T) {
	s := storetest.SQLite(t, store.Config{})
	bad := []store.QueueConfig{
		{},
		{Handler: store.HandlerFunc(nil), MaxWorkers: -1},
		{Handler: store.HandlerFunc(nil), JobTimeout: -time.Second},
	}
	for _, c := range bad {
		if _, err := s.NewQueue(c); err == nil {
			t.Errorf("NewQueue(%+v) accepted", c)
		}
	}
	q, err := s.NewQueue(store.QueueConfig{Handler: store.HandlerFunc(func(context.Context, store.Job) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(context.Background()); err != nil {
		t.Errorf("Stop of an unstarted queue: %v", err)
	}
}

// TestQueueNotifiedWithoutPoll: with a poll too rare to matter, a task
// submitted to a running queue and a wake of a snoozed task still run
// promptly — the queue is told, on both databases (in process on SQLite),
// so an idle node need not poll often.
func TestQueueNotifiedWithoutPoll(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			runs := make(chan run, 16)
			parked := false
			q, err := s.NewQueue(store.QueueConfig{
				MaxWorkers:   1,
				PollInterval: time.Hour,
				WakeInterval: time.Hour,
				Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
					runs <- run{job.TaskID, job.Attempt}
					task, err := s.Task(ctx, job.TaskID)
					if err != nil {
						return err
					}
					// On Postgres the job comes with its task, read as it
					// started (with clearing its wake).
					if (name == store.DriverPostgres && job.Task == nil) || (job.Task != nil && (job.Task.ID != task.ID || job.Task.Prompt != task.Prompt)) {
						t.Errorf("job of %s came with task %+v", job.TaskID, job.Task)
					}
					if task.Prompt == "park" && !parked { // one worker: no race
						parked = true
						return store.Snooze(time.Hour)
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
			t.Cleanup(func() {
				stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				if err := q.Stop(stopCtx); err != nil {
					t.Errorf("Stop: %v", err)
				}
			})
			first := mustCreate(t, s, newTask("quick"), "")
			want(t, runs, first.ID)
			waitJobState(t, s, first.JobID, "completed")
			park := mustCreate(t, s, newTask("park"), "")
			want(t, runs, park.ID)
			waitJobState(t, s, park.JobID, "scheduled")
			if err := s.Wake(ctx, park.ID); err != nil {
				t.Fatal(err)
			}
			want(t, runs, park.ID)
			waitJobState(t, s, park.JobID, "completed")
		})
	}
}

// TestQueueDozesWhenIdle: an idle SQLite queue stops River (whose
// completer would wake 20 times a second) and still runs what comes: a
// task submitted while it dozes, and a snoozed job whose snooze ends with
// nobody waking it. While it dozes its node leads. On Postgres it dozes
// only while alone, and wakes when another node comes.
func TestQueueDozesWhenIdle(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testDozes(t, open) })
	}
}

func testDozes(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	var alone atomic.Bool
	alone.Store(true)
	runs := make(chan run, 16)
	var mu sync.Mutex
	snoozed := map[string]bool{}
	const idle = 2 * time.Second
	q, err := s.NewQueue(store.QueueConfig{
		ID:           "node-a",
		MaxWorkers:   1,
		PollInterval: time.Hour, // only the hub and the due time may wake it
		WakeInterval: time.Hour,
		IdleAfter:    idle,
		Alone:        alone.Load,
		Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
			runs <- run{job.TaskID, job.Attempt}
			task, err := s.Task(ctx, job.TaskID)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if task.Prompt == "snooze" && !snoozed[task.ID] {
				snoozed[task.ID] = true
				// Longer than River's scheduler interval (5s), so the job
				// waits as scheduled, and ends while the queue dozes.
				return store.Snooze(idle + 6*time.Second)
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
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := q.Stop(stopCtx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	dozes := func() {
		t.Helper()
		eventually.True(t, 30*time.Second, q.Dozing, "the idle queue did not doze")
		if l, err := s.Leader(ctx); err != nil || l != "node-a" {
			t.Fatalf("leader while dozing = %q, %v; want node-a", l, err)
		}
	}
	dozes()
	first := mustCreate(t, s, newTask("quick"), "")
	want(t, runs, first.ID)
	if q.Dozing() {
		t.Fatal("the queue runs a job and says it dozes")
	}
	waitJobState(t, s, first.JobID, "completed")
	dozes()
	park := mustCreate(t, s, newTask("snooze"), "")
	want(t, runs, park.ID)
	waitJobState(t, s, park.JobID, "scheduled")
	dozes() // before the snooze ends
	want(t, runs, park.ID)
	waitJobState(t, s, park.JobID, "completed")
	dozes()
	alone.Store(false) // another node's heartbeat
	eventually.True(t, 30*time.Second, func() bool { return !q.Dozing() }, "the queue dozes on beside another node")
}
