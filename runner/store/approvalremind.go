package store

import (
	"context"
	"fmt"
	"time"
)

// RecordApprovalReminder records that pending approval id is reminded of
// at at, provided its last reminder is still prev (zero: none yet). It is
// a compare-and-swap: of the callers that read the same prev — a relay
// restarted mid-reminder, two nodes — exactly one gets true and posts the
// reminder; the others get false and post nothing. A decided or expired
// approval is never reminded of (false).
func (s *Store) RecordApprovalReminder(ctx context.Context, id string, prev, at time.Time) (bool, error) {
	var last int64
	if !prev.IsZero() {
		last = micros(prev)
	}
	n, err := s.db.exec(ctx, "UPDATE approvals SET reminded_at = ? WHERE id = ? AND state = ? AND COALESCE(reminded_at, 0) = ?",
		micros(at), id, string(ApprovalPending), last)
	if err != nil {
		return false, fmt.Errorf("store: record a reminder of approval %s: %w", id, err)
	}
	return n == 1, nil
}

// ExpireTaskApprovals moves every pending approval of task taskID to
// expired, with an "expired" audit row each saying why, and returns them.
// A cancelled task's requests are closed this way: one without a deadline
// would otherwise wait (and be listed as waiting) for ever.
func (s *Store) ExpireTaskApprovals(ctx context.Context, taskID, why string) ([]Approval, error) {
	now := s.now()
	var out []Approval
	err := s.inTx(ctx, func(tx txn) error {
		out = out[:0]
		rs, err := tx.query(ctx, `UPDATE approvals SET state = ?, decided_at = ?
			WHERE task_id = ? AND state = ? RETURNING `+approvalCols,
			string(ApprovalExpired), micros(now), taskID, string(ApprovalPending))
		if err != nil {
			return fmt.Errorf("store: close the approvals of %s: %w", taskID, err)
		}
		for rs.Next() {
			a, err := scanApproval(rs)
			if err != nil {
				rs.Close()
				return fmt.Errorf("store: close the approvals of %s: %w", taskID, err)
			}
			out = append(out, a)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return fmt.Errorf("store: close the approvals of %s: %w", taskID, err)
		}
		for _, a := range out {
			if err := s.audit(ctx, tx, a, string(ApprovalExpired), "system", why, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
