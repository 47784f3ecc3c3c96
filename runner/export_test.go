package runner

import "context"

// TickSchedules runs one pass of the schedule loop, so tests drive
// schedules with their own clock instead of waiting for the ticker.
func (s *Service) TickSchedules(ctx context.Context) error { return s.tickSchedules(ctx) }

// Sweeps counts the approval expiry passes this node ran (as River's
// leader).
func (s *Service) Sweeps() int64 { return s.expirer.Passes() }
