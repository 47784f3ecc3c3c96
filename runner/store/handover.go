package store

import (
	"context"
	"fmt"
	"time"
)

// RequeueStale queues task id again (a new job, state queued) only while
// it is still running on owner with its last heartbeat — or, when it never
// sent one, its last update — before cutoff: the node died running it.
// The condition is checked in the same statement that moves the task, so
// any number of nodes may look for dead nodes' tasks at once and each such
// task is taken over once; a task that another node meanwhile took over
// (new lease, fresh heartbeat) is left alone. Otherwise the error wraps
// ErrStateConflict. evs are appended to the task's log with the change
// (see StateOpts.Events).
func (s *Store) RequeueStale(ctx context.Context, id, owner string, cutoff time.Time, evs ...EventInput) (Task, error) {
	events, err := s.newEvents(id, evs)
	if err != nil {
		return Task{}, err
	}
	var task Task
	err = s.inTx(ctx, func(tx txn) error {
		cur, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		res, err := s.river.insertTx(ctx, tx, TaskArgs{TaskID: id, Goal: cur.Goal})
		s.jobs.signal("") // see Queue.doze
		if err != nil {
			return fmt.Errorf("store: insert job: %w", err)
		}
		task, err = scanTask(tx.queryRow(ctx, `UPDATE tasks SET state = ?, job_id = ?, updated_at = ?,
				cancel_requested = 0, finished_at = NULL
			WHERE id = ? AND state = ? AND lease_owner = ? AND COALESCE(heartbeat_at, updated_at) < ?
			RETURNING `+taskCols,
			string(StateQueued), res.Job.ID, micros(s.now()), id, string(StateRunning), owner, micros(cutoff)))
		if isNoRows(err) {
			cur, gerr := getTask(ctx, tx, id)
			if gerr != nil {
				return gerr
			}
			return &StateError{TaskID: id, Current: cur.State}
		}
		if err != nil {
			return fmt.Errorf("store: requeue stale task %s: %w", id, err)
		}
		return appendEventsTx(ctx, tx, events)
	})
	if err != nil {
		return Task{}, err
	}
	return task, nil
}
