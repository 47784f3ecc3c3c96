package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"reasonix/internal/ids"
	"reasonix/policy"
)

// Standing grants are "Allow always": durable rules in allow form that an
// approver chose for every later task of a workspace, a schedule or a
// webhook. They are not the task grants of grant.go ("allow for this
// task"), which live and die with one task.

// GrantFor is what a standing grant applies to.
type GrantFor string

// The targets of a standing grant; each is named (the workspace's,
// schedule's or webhook's name).
const (
	GrantForWorkspace GrantFor = "workspace"
	GrantForSchedule  GrantFor = "schedule"
	GrantForWebhook   GrantFor = "webhook"
)

// Valid reports whether f is one of the targets.
func (f GrantFor) Valid() bool {
	switch f {
	case GrantForWorkspace, GrantForSchedule, GrantForWebhook:
		return true
	}
	return false
}

// NewStandingGrant is a standing grant to record.
type NewStandingGrant struct {
	Scope     string   // a policy rule in allow form: Bash(go test:*), Edit(docs/**)
	For       GrantFor // required
	Name      string   // the workspace, schedule or webhook; required
	GrantedBy string   // the principal that chose it; required
	// ApprovalID and TaskID record the decision that made the grant;
	// optional.
	ApprovalID string
	TaskID     string
	// ExpiresAt ends the grant; zero never does.
	ExpiresAt time.Time
}

// StandingGrant is a stored standing grant.
type StandingGrant struct {
	ID         string
	Scope      string
	For        GrantFor
	Name       string
	GrantedBy  string
	ApprovalID string
	TaskID     string
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: no expiry
	RevokedAt  time.Time // zero while it stands
	RevokedBy  string
	Uses       int64     // how many calls it allowed
	LastUsedAt time.Time // zero before the first use
}

// Live reports whether g allows calls at now: not revoked, not expired.
func (g StandingGrant) Live(now time.Time) bool {
	return g.RevokedAt.IsZero() && (g.ExpiresAt.IsZero() || now.Before(g.ExpiresAt))
}

const standingCols = `id, scope, grant_for, name, granted_by, approval_id, task_id, created_at,
	expires_at, revoked_at, revoked_by, uses, last_used_at`

func scanStandingGrant(r row) (StandingGrant, error) {
	var (
		g                         StandingGrant
		forName                   string
		created                   int64
		expires, revoked, lastUse sql.NullInt64
	)
	if err := r.Scan(&g.ID, &g.Scope, &forName, &g.Name, &g.GrantedBy, &g.ApprovalID, &g.TaskID, &created,
		&expires, &revoked, &g.RevokedBy, &g.Uses, &lastUse); err != nil {
		return StandingGrant{}, err
	}
	g.For = GrantFor(forName)
	g.CreatedAt = fromMicros(created)
	g.ExpiresAt, g.RevokedAt, g.LastUsedAt = fromNullMicros(expires), fromNullMicros(revoked), fromNullMicros(lastUse)
	return g, nil
}

func (n *NewStandingGrant) validate(now time.Time) error {
	n.Scope = strings.TrimSpace(n.Scope)
	if _, err := policy.ParseRule(n.Scope); err != nil {
		return invalid("standing grant scope %q: %v", n.Scope, err)
	}
	return n.validateTarget(now)
}

// validateTarget checks what n applies to, who granted it and its expiry.
func (n *NewStandingGrant) validateTarget(now time.Time) error {
	n.Name = strings.TrimSpace(n.Name)
	if !n.For.Valid() {
		return invalid("grant_for %q is not workspace, schedule or webhook", n.For)
	}
	if n.Name == "" || len(n.Name) > 256 {
		return invalid("a standing grant names its %s (at most 256 bytes)", n.For)
	}
	if n.GrantedBy == "" {
		return invalid("a standing grant names who granted it")
	}
	if !n.ExpiresAt.IsZero() && !n.ExpiresAt.After(now) {
		return invalid("standing grant expiry %s is not in the future", n.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

// AddStandingGrant records a standing grant. When the same scope already
// stands for the same target it is returned unchanged (its expiry too):
// granting twice is one grant.
func (s *Store) AddStandingGrant(ctx context.Context, n NewStandingGrant) (StandingGrant, error) {
	now := s.now()
	if err := n.validate(now); err != nil {
		return StandingGrant{}, err
	}
	var out StandingGrant
	err := s.inTx(ctx, func(tx txn) error {
		var err error
		out, err = addStandingGrant(ctx, tx, n, now)
		return err
	})
	return out, err
}

// addStandingGrant inserts n in tx (validated) and moves the epoch. An
// expired grant of the same target and scope is closed first so that the
// new one can stand.
func addStandingGrant(ctx context.Context, tx txn, n NewStandingGrant, now time.Time) (StandingGrant, error) {
	if _, err := tx.exec(ctx, `UPDATE standing_grants SET revoked_at = expires_at
		WHERE grant_for = ? AND name = ? AND scope = ? AND revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?`,
		string(n.For), n.Name, n.Scope, micros(now)); err != nil {
		return StandingGrant{}, fmt.Errorf("store: close an expired standing grant: %w", err)
	}
	added, err := tx.exec(ctx, `INSERT INTO standing_grants (id, scope, grant_for, name, granted_by, approval_id, task_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		ids.Sortable("sg_", now), n.Scope, string(n.For), n.Name, n.GrantedBy, n.ApprovalID, n.TaskID, micros(now), nullMicros(n.ExpiresAt))
	if err != nil {
		return StandingGrant{}, fmt.Errorf("store: add standing grant: %w", err)
	}
	if added > 0 {
		if err := bumpGrantEpoch(ctx, tx); err != nil {
			return StandingGrant{}, err
		}
	}
	g, err := scanStandingGrant(tx.queryRow(ctx, "SELECT "+standingCols+` FROM standing_grants
		WHERE grant_for = ? AND name = ? AND scope = ? AND revoked_at IS NULL`, string(n.For), n.Name, n.Scope))
	if err != nil {
		return StandingGrant{}, fmt.Errorf("store: read standing grant: %w", err)
	}
	return g, nil
}

func bumpGrantEpoch(ctx context.Context, tx txn) error {
	if _, err := tx.exec(ctx, "UPDATE standing_grant_epoch SET n = n + 1 WHERE id = 1"); err != nil {
		return fmt.Errorf("store: standing grant epoch: %w", err)
	}
	return nil
}

// StandingGrantEpoch is a counter that moves with every standing grant
// added or revoked, on every node: a copy of the grants read at epoch e is
// current as long as the epoch is still e (expiry is a matter of the
// clock, see StandingGrant.Live).
func (s *Store) StandingGrantEpoch(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.queryRow(ctx, "SELECT n FROM standing_grant_epoch WHERE id = 1").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: standing grant epoch: %w", err)
	}
	return n, nil
}

// StandingGrantFilter selects standing grants. Zero fields do not filter.
type StandingGrantFilter struct {
	For  GrantFor
	Name string
	// All includes revoked grants (expired ones are always listed: their
	// rows say when they ended).
	All bool
}

// StandingGrants lists standing grants matching f, oldest first, with the
// epoch they were read at (in the same transaction, so a copy built from
// them is exactly as current as the epoch says).
func (s *Store) StandingGrants(ctx context.Context, f StandingGrantFilter) ([]StandingGrant, int64, error) {
	q := "SELECT " + standingCols + " FROM standing_grants WHERE 1 = 1"
	var args []any
	if f.For != "" {
		q += " AND grant_for = ?"
		args = append(args, string(f.For))
	}
	if f.Name != "" {
		q += " AND name = ?"
		args = append(args, f.Name)
	}
	if !f.All {
		q += " AND revoked_at IS NULL"
	}
	q += " ORDER BY created_at, id"
	var (
		out   []StandingGrant
		epoch int64
	)
	err := s.inTx(ctx, func(tx txn) error {
		out = out[:0]
		if err := tx.queryRow(ctx, "SELECT n FROM standing_grant_epoch WHERE id = 1").Scan(&epoch); err != nil {
			return fmt.Errorf("store: standing grant epoch: %w", err)
		}
		rs, err := tx.query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: list standing grants: %w", err)
		}
		defer rs.Close()
		for rs.Next() {
			g, err := scanStandingGrant(rs)
			if err != nil {
				return fmt.Errorf("store: list standing grants: %w", err)
			}
			out = append(out, g)
		}
		if err := rs.Err(); err != nil {
			return fmt.Errorf("store: list standing grants: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, epoch, nil
}

// StandingGrant returns the standing grant id, or an error wrapping
// ErrNotFound.
func (s *Store) StandingGrant(ctx context.Context, id string) (StandingGrant, error) {
	g, err := scanStandingGrant(s.db.queryRow(ctx, "SELECT "+standingCols+" FROM standing_grants WHERE id = ?", id))
	if isNoRows(err) {
		return StandingGrant{}, fmt.Errorf("store: standing grant %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return StandingGrant{}, fmt.Errorf("store: standing grant %s: %w", id, err)
	}
	return g, nil
}

// RevokeStandingGrant ends grant id now, recording who revoked it. An
// unknown id wraps ErrNotFound; revoking a revoked grant returns it as it
// is (the first revocation stands).
func (s *Store) RevokeStandingGrant(ctx context.Context, id, by string) (StandingGrant, error) {
	if by == "" {
		return StandingGrant{}, invalid("a revocation names who revoked")
	}
	now := s.now()
	var out StandingGrant
	err := s.inTx(ctx, func(tx txn) error {
		n, err := tx.exec(ctx, "UPDATE standing_grants SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL",
			micros(now), by, id)
		if err != nil {
			return fmt.Errorf("store: revoke standing grant %s: %w", id, err)
		}
		if n > 0 {
			if err := bumpGrantEpoch(ctx, tx); err != nil {
				return err
			}
		}
		out, err = scanStandingGrant(tx.queryRow(ctx, "SELECT "+standingCols+" FROM standing_grants WHERE id = ?", id))
		if isNoRows(err) {
			return fmt.Errorf("store: standing grant %s: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return StandingGrant{}, err
	}
	return out, nil
}

// UseStandingGrant counts one call grant id allowed. It reports false when
// the grant no longer stands (revoked or expired meanwhile, perhaps on
// another node): then it allowed nothing, and the caller asks as if there
// were no grant. The epoch does not move: a use changes no decision.
func (s *Store) UseStandingGrant(ctx context.Context, id string) (bool, error) {
	now := micros(s.now())
	n, err := s.db.exec(ctx, `UPDATE standing_grants SET uses = uses + 1, last_used_at = ?
		WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, now, id, now)
	if err != nil {
		return false, fmt.Errorf("store: use standing grant %s: %w", id, err)
	}
	return n == 1, nil
}
