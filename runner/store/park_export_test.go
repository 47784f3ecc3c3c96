package store

import "context"

// ParkForTest puts job of task where a Wake finds it between its handler's
// snooze and River's record of it: parked by this process, and running,
// or scheduled (River recorded the snooze) when recorded.
func (s *Store) ParkForTest(ctx context.Context, task string, job int64, recorded bool) error {
	s.parked.Store(task, job)
	q := "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = scheduled_at WHERE id = ?"
	if recorded {
		q = "UPDATE river_job SET state = 'scheduled' WHERE id = ?"
	}
	_, err := s.db.exec(ctx, q, job)
	return err
}
