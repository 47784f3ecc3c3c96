package runner

import "context"

// TickSchedules runs one pass of the schedule loop, so tests drive
// schedules with their own clock instead of waiting for the ticker.
func (s *Service) TickSchedules(ctx context.Context) error { return s.sched.firer.Tick(ctx) }

// Sweeps counts the approval expiry passes this node ran (as River's
// leader).
func (s *Service) Sweeps() int64 { return s.expirer.Passes() }

// RetryPublishes runs one pass of the publish retrier's work (the
// records store.DuePublishes lists, each driven as the retrier does), so
// tests need not wait for its interval.
func (s *Service) RetryPublishes(ctx context.Context) error {
	ids, err := s.st.DuePublishes(ctx, 50)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.drivePublish(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
