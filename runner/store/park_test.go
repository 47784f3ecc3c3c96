package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestWakeOfAParkedJobSupersedesIt: a Wake that finds its task's job
// parked by this process but still running in River (the handler returned
// a snooze River has not recorded: its batch completer writes a lone
// completion up to 250 ms later) gives the task a new job, available at
// once, instead of waiting for River's record; once River recorded it,
// the job itself is retried, as before. No queue runs: the states are put
// in place, so the test does not depend on when River flushes.
func TestWakeOfAParkedJobSupersedesIt(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})

			task := mustCreate(t, s, newTask("park"), "")
			if err := s.ParkForTest(ctx, task.ID, task.JobID, false); err != nil {
				t.Fatal(err)
			}
			if err := s.Wake(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			woken, err := s.Task(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if woken.JobID == task.JobID || woken.State != task.State {
				t.Fatalf("after the wake: job %d state %s; want a new job in place of %d, state %s kept",
					woken.JobID, woken.State, task.JobID, task.State)
			}
			if st, _ := s.JobStateForTest(ctx, woken.JobID); st != "available" {
				t.Errorf("the new job is %s, want available", st)
			}
			if st, _ := s.JobStateForTest(ctx, task.JobID); st != "running" {
				t.Errorf("the parked job is %s, want it left to River (running)", st)
			}
			// The park was used up: another wake does not supersede again.
			if err := s.Wake(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			if again, _ := s.Task(ctx, task.ID); again.JobID != woken.JobID {
				t.Errorf("a second wake replaced job %d by %d", woken.JobID, again.JobID)
			}

			// River recorded the snooze before the wake: the job itself is
			// retried.
			other := mustCreate(t, s, newTask("recorded"), "")
			if err := s.ParkForTest(ctx, other.ID, other.JobID, true); err != nil {
				t.Fatal(err)
			}
			if err := s.Wake(ctx, other.ID); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Task(ctx, other.ID); got.JobID != other.JobID {
				t.Errorf("a recorded snooze was superseded: job %d → %d", other.JobID, got.JobID)
			}
			if st, _ := s.JobStateForTest(ctx, other.JobID); st != "available" {
				t.Errorf("the recorded job is %s after the wake, want available (retried)", st)
			}
		})
	}
}

// TestWakeWhileRunningRunsANewJobAtOnce: a wake that lands while the job
// runs is looked for as the job snoozes, and the task runs again by a new
// job rather than after River records the snooze and reports it. The
// superseded job, when River records it, is not run again for that wake.
func TestWakeWhileRunningRunsANewJobAtOnce(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			type call struct {
				job  int64
				task store.Task
			}
			runs := make(chan call, 16)
			var mu sync.Mutex
			n := 0
			q, err := s.NewQueue(store.QueueConfig{
				MaxWorkers: 1, PollInterval: time.Hour, WakeInterval: time.Hour,
				Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
					task, err := s.Task(ctx, job.TaskID)
					if err != nil {
						return err
					}
					runs <- call{job.ID, task}
					mu.Lock()
					n++
					first := n == 1
					mu.Unlock()
					if first {
						if err := s.Wake(ctx, job.TaskID); err != nil {
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
			task := mustCreate(t, s, newTask("park"), "")
			next := func() call {
				t.Helper()
				select {
				case c := <-runs:
					return c
				case <-time.After(15 * time.Second):
					t.Fatal("the task did not run")
				}
				return call{}
			}
			first := next()
			second := next()
			if first.job != task.JobID || second.job == first.job || second.task.JobID != second.job {
				t.Fatalf("runs by jobs %d then %d (the task's then %d); want the task's job %d, then a new one",
					first.job, second.job, second.task.JobID, task.JobID)
			}
			waitJobState(t, s, second.job, "completed")
			waitJobState(t, s, first.job, "scheduled") // River's record of the snooze, left alone
		})
	}
}
