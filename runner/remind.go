package runner

import (
	"context"
	"time"
)

// RecordReminder records that pending approval id is reminded of at at,
// its last reminder having been at prev (zero: none yet). It reports true
// to exactly one caller of those that read the same prev — the one to
// post the reminder — and false for a decided approval, so a restarted
// relay or a second node never repeats a reminder. The chat relay calls
// it before each reminder (an approval without a deadline is reminded of
// every [bot] approval_remind; one with a deadline once, at half of it).
func (s *Service) RecordReminder(ctx context.Context, id string, prev, at time.Time) (bool, error) {
	ok, err := s.st.RecordApprovalReminder(ctx, id, prev, at)
	return ok, mapStoreErr(err, "approval "+id)
}
