package store

import (
	"context"
	"fmt"
)

// RenewJob gives task id a new River job, its state unchanged, if and only
// if that state is state; the old job, when it ever runs, finds it is no
// longer the task's. It is how a parked task whose job died running (the
// process was killed while the job looked at the task) gets a job a wake
// reaches again, where Requeue would make it run anew. It returns a
// *StateError when the task is in another state.
func (s *Store) RenewJob(ctx context.Context, id string, state State) error {
	return s.inTx(ctx, func(tx txn) error {
		cur, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.State != state {
			return &StateError{TaskID: id, Current: cur.State}
		}
		res, err := s.river.insertTx(ctx, tx, TaskArgs{TaskID: id, Goal: cur.Goal})
		s.jobs.signal("") // see Queue.doze
		if err != nil {
			return fmt.Errorf("store: insert job: %w", err)
		}
		n, err := tx.exec(ctx, `UPDATE tasks SET job_id = ?, updated_at = ? WHERE id = ? AND state = ?`,
			res.Job.ID, micros(s.now()), id, string(state))
		if err != nil {
			return fmt.Errorf("store: renew the job of %s: %w", id, err)
		}
		if n == 0 {
			return &StateError{TaskID: id, Current: cur.State}
		}
		return nil
	})
}
