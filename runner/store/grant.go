package store

import (
	"context"
	"fmt"
	"strings"
)

// AddGrant records a task-wide grant (a policy rule in allow form) chosen by
// an approver, so a resumed run restores it. Adding it twice is a no-op.
func (s *Store) AddGrant(ctx context.Context, taskID, scope string) error {
	if strings.TrimSpace(scope) == "" {
		return invalid("grant scope is empty")
	}
	_, err := s.db.exec(ctx, `INSERT INTO task_grants (task_id, scope, created_at) VALUES (?, ?, ?)
		ON CONFLICT (task_id, scope) DO NOTHING`, taskID, scope, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: add grant to %s: %w", taskID, err)
	}
	return nil
}

// Grants lists the task's grants, oldest first.
func (s *Store) Grants(ctx context.Context, taskID string) ([]string, error) {
	rs, err := s.db.query(ctx, "SELECT scope FROM task_grants WHERE task_id = ? ORDER BY created_at, scope", taskID)
	if err != nil {
		return nil, fmt.Errorf("store: read grants: %w", err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var g string
		if err := rs.Scan(&g); err != nil {
			return nil, fmt.Errorf("store: read grants: %w", err)
		}
		out = append(out, g)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read grants: %w", err)
	}
	return out, nil
}

// ApprovalsForCall lists the task's approvals bound to callHash, newest
// first: a resumed run asks again about the same call and answers from them.
func (s *Store) ApprovalsForCall(ctx context.Context, taskID, callHash string) ([]Approval, error) {
	return s.approvals(ctx, "SELECT "+approvalCols+" FROM approvals WHERE task_id = ? AND call_hash = ? ORDER BY created_at DESC, id DESC",
		taskID, callHash)
}

// ListApprovals lists approvals in state (every state when ""), of one task
// when taskID is set, oldest first, at most limit (default 100, max 1000).
func (s *Store) ListApprovals(ctx context.Context, state ApprovalState, taskID string, limit int) ([]Approval, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	q := "SELECT " + approvalCols + " FROM approvals WHERE 1 = 1"
	var args []any
	if state != "" {
		q += " AND state = ?"
		args = append(args, string(state))
	}
	if taskID != "" {
		q += " AND task_id = ?"
		args = append(args, taskID)
	}
	args = append(args, limit)
	return s.approvals(ctx, q+" ORDER BY created_at, id LIMIT ?", args...)
}

// RecentDecisions lists the approvals no longer pending (allowed, denied
// or expired), the latest decision first, at most limit (default 50, max
// 1000): ListApprovals lists oldest first, so its capped pages would stop
// showing new decisions once there are more than the cap.
func (s *Store) RecentDecisions(ctx context.Context, limit int) ([]Approval, error) {
	if limit <= 0 {
		limit = 50
	}
	return s.approvals(ctx, "SELECT "+approvalCols+" FROM approvals WHERE state <> ? ORDER BY decided_at DESC, id DESC LIMIT ?",
		string(ApprovalPending), min(limit, 1000))
}

// ConsumeApproval marks a decided (or expired) approval as acted upon,
// exactly once: it reports false when it was consumed before, so an
// allow-once decision lets its call run a single time.
func (s *Store) ConsumeApproval(ctx context.Context, id string) (bool, error) {
	n, err := s.db.exec(ctx, "UPDATE approvals SET consumed_at = ? WHERE id = ? AND state <> ? AND consumed_at IS NULL",
		micros(s.now()), id, string(ApprovalPending))
	if err != nil {
		return false, fmt.Errorf("store: consume approval %s: %w", id, err)
	}
	return n == 1, nil
}
