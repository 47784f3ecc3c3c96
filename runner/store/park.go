package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
)

// A job that snoozes is recorded by River's batch completer, which writes
// a lone completion only on every fifth 50 ms tick: for up to 250 ms after
// the handler returned, River still holds the job as running, and a Wake
// in that window cannot make it available (retryJob touches only parked
// jobs). A check result or a decision that arrives right after its task
// parked waited for that flush — most of the 100 ms budget of a CI
// webhook to a running task, measured at 150–250 ms.
//
// So this process remembers, per task, the job whose handler returned a
// snooze here until River reports the snooze (or a job of the task starts
// again), and a Wake of that task in the meantime does not wait: it gives
// the task a new job, available at once, in place of the parked one
// (supersede). The old job runs later, finds that the task's job is
// another one, and does nothing (a Handler's contract). A wake that landed
// while the job still ran is looked for as it snoozes, for the same
// reason. A Wake from another process, which cannot know, retries the job
// once River recorded the snooze, as before.

// park remembers that job's handler for task returned a snooze, and
// supersedes it at once when a wake landed while it ran.
func (s *Store) park(ctx context.Context, task string, job int64) {
	s.parked.Store(task, job)
	var pending int
	err := s.db.queryRow(ctx, "SELECT wake_pending FROM tasks WHERE id = ? AND job_id = ?", task, job).Scan(&pending)
	if err != nil || pending == 0 {
		return // no wake (or none readable): River's record and the sweeps do the rest
	}
	if s.parked.CompareAndDelete(task, job) {
		if err := s.supersede(ctx, task, job); err != nil && ctx.Err() == nil {
			s.log.Warn("store: waking a task as its job snoozed failed; the wake is retried once River records the snooze", "task", task, "err", err)
		}
	}
}

// unpark forgets the parked job of task, if it is job.
func (s *Store) unpark(task string, job int64) { s.parked.CompareAndDelete(task, job) }

// wakeParked supersedes task's job when this process parked it and River
// has not recorded the snooze yet; false when it did nothing.
func (s *Store) wakeParked(ctx context.Context, task string, job int64) (bool, error) {
	if !s.parked.CompareAndDelete(task, job) {
		return false, nil
	}
	if err := s.supersede(ctx, task, job); err != nil {
		return false, err
	}
	return true, nil
}

// Why supersede rolled back: the job is no longer the task's (nothing to
// wake), or River no longer holds it as running (it recorded the snooze,
// and a retry of that job is the way to wake it).
var (
	errSuperseded = errors.New("store: the job is not the task's")
	errRecorded   = errors.New("store: River recorded the job's snooze")
)

// supersede gives task a new job, available now, in place of job, whose
// handler returned: only while job is still the task's and River still
// holds it as running, checked in the same transaction (on Postgres the
// job's row is locked, so River's own record of the snooze waits for it).
// It returns nil having done nothing when that no longer holds: the
// caller's wake then takes the usual way.
func (s *Store) supersede(ctx context.Context, task string, job int64) error {
	lock := ""
	if s.dialect == dialectPostgres {
		lock = " FOR UPDATE"
	}
	wake := func() error {
		return s.inTx(ctx, func(tx txn) error {
			var state string
			err := tx.queryRow(ctx, "SELECT state FROM river_job WHERE id = ?"+lock, job).Scan(&state)
			if isNoRows(err) {
				return errSuperseded
			}
			if err == nil && state != "running" {
				return errRecorded
			}
			if err != nil {
				return fmt.Errorf("store: read job %d: %w", job, err)
			}
			var goal int
			if err := tx.queryRow(ctx, "SELECT goal FROM tasks WHERE id = ? AND job_id = ?", task, job).Scan(&goal); isNoRows(err) {
				return errSuperseded
			} else if err != nil {
				return fmt.Errorf("store: read task %s: %w", task, err)
			}
			res, err := s.river.insertTx(ctx, tx, TaskArgs{TaskID: task, Goal: goal != 0})
			s.jobs.signal("") // see Queue.doze
			if err != nil {
				return fmt.Errorf("store: insert job: %w", err)
			}
			if _, err := tx.exec(ctx, "UPDATE tasks SET job_id = ? WHERE id = ? AND job_id = ?", res.Job.ID, task, job); err != nil {
				return fmt.Errorf("store: supersede job of %s: %w", task, err)
			}
			return nil
		})
	}
	switch err := wake(); {
	case errors.Is(err, errRecorded):
		return s.retryJob(ctx, job) // recorded meanwhile: retry it
	case errors.Is(err, errSuperseded):
		return nil
	default:
		return err
	}
}

// snoozed reports whether a handler's error parks its job.
func snoozed(err error) bool {
	var sn *river.JobSnoozeError
	return errors.As(err, &sn)
}
