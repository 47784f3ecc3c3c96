package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"reasonix/internal/ids"
)

// ApprovalState is where an approval request is.
type ApprovalState string

// The approval states. Only pending changes, exactly once.
const (
	ApprovalPending ApprovalState = "pending"
	ApprovalAllowed ApprovalState = "allowed"
	ApprovalDenied  ApprovalState = "denied"
	ApprovalExpired ApprovalState = "expired"
)

// Decision is what an approver chose.
type Decision string

// The decisions. AllowTask also covers later identical calls of the task;
// honouring that is the caller's business, the store only records it.
// AllowAlways allows the call and records a standing grant (see
// DecideOpts.Grant) in the same transaction.
const (
	AllowOnce   Decision = "allow_once"
	AllowTask   Decision = "allow_task"
	AllowAlways Decision = "allow_always"
	Deny        Decision = "deny"
	// StopPublish answers a budget approval (the runner's "budget" record):
	// stop the task and publish what it made. It is a denial.
	StopPublish Decision = "stop_publish"
)

// NewApproval is a request for a human decision on one tool call.
type NewApproval struct {
	TaskID    string
	Tool      string
	Subject   string // what the rule matched: a command, a path
	CallHash  string // hash of the exact call; a decision is bound to it
	Preview   string // what the approver is shown
	Requester string // who asked for the task
	// Approvers are the platform ids allowed to decide. Empty means the
	// store does not restrict who decides (the caller checked).
	Approvers []string
	// Scopes are the task-wide grants an approver may choose with
	// AllowTask, best first; empty means only allow-once is possible.
	Scopes []string
	// ExpiresAt is when an unanswered request expires (a deny); required
	// unless NoDeadline.
	ExpiresAt time.Time
	// NoDeadline makes the request wait until it is decided or its task
	// ends (approval_ttl = "none"): ExpiresAt must then be zero, and the
	// request never expires.
	NoDeadline bool
	// Instructors are the principals other than the requester whose
	// messages the task had read when the call was asked for: they
	// shaped the call, so the caller refuses their decisions as it
	// refuses the requester's.
	Instructors []string
}

// Approval is a stored approval request.
type Approval struct {
	ID        string
	TaskID    string
	Tool      string
	Subject   string
	CallHash  string
	Preview   string
	Requester string
	Approvers []string
	State     ApprovalState
	Decision  Decision // "" until decided
	DecidedBy string   // "" until decided
	CreatedAt time.Time
	ExpiresAt time.Time // zero: no deadline (see NoDeadline)
	DecidedAt time.Time // zero until decided or expired
	Scopes    []string  // offered task-wide grants
	Scope     string    // the grant chosen with AllowTask; "" otherwise
	Note      string    // the approver's note, passed to the model with a denial
	// ConsumedAt is when a run acted on the decision (see ConsumeApproval);
	// zero until then.
	ConsumedAt time.Time
	// Instructors: see NewApproval; empty for approvals stored before
	// they were recorded.
	Instructors []string
	// RemindedAt is when its last reminder was sent (see
	// RecordApprovalReminder); zero before the first.
	RemindedAt time.Time
}

// NoDeadline reports whether a waits without a deadline.
func (a Approval) NoDeadline() bool { return a.ExpiresAt.IsZero() }

// noDeadline is expires_at of an approval without a deadline: the column
// predates approval_ttl = "none" and is NOT NULL.
const noDeadline = 0

// AuditEntry is one row of the append-only approval audit trail.
type AuditEntry struct {
	ID         string
	ApprovalID string
	TaskID     string
	Action     string // "requested", a Decision, or "expired"
	Actor      string
	Detail     string
	Time       time.Time
}

const approvalCols = `id, task_id, tool, subject, call_hash, preview, requester, approvers, state,
	decision, decided_by, created_at, expires_at, decided_at, scopes, scope, note, consumed_at, instructors, reminded_at`

func scanApproval(r row) (Approval, error) {
	var (
		a                Approval
		approvers        string
		state, decision  string
		created, expires int64
		decided          sql.NullInt64
		scopes           string
		consumed         sql.NullInt64
		instructors      string
		reminded         sql.NullInt64
	)
	if err := r.Scan(&a.ID, &a.TaskID, &a.Tool, &a.Subject, &a.CallHash, &a.Preview, &a.Requester,
		&approvers, &state, &decision, &a.DecidedBy, &created, &expires, &decided,
		&scopes, &a.Scope, &a.Note, &consumed, &instructors, &reminded); err != nil {
		return Approval{}, err
	}
	if err := json.Unmarshal([]byte(instructors), &a.Instructors); err != nil {
		return Approval{}, fmt.Errorf("store: approval %s instructors: %w", a.ID, err)
	}
	a.ConsumedAt = fromNullMicros(consumed)
	if err := json.Unmarshal([]byte(scopes), &a.Scopes); err != nil {
		return Approval{}, fmt.Errorf("store: approval %s scopes: %w", a.ID, err)
	}
	a.State, a.Decision = ApprovalState(state), Decision(decision)
	a.CreatedAt, a.DecidedAt, a.RemindedAt = fromMicros(created), fromNullMicros(decided), fromNullMicros(reminded)
	if expires != noDeadline {
		a.ExpiresAt = fromMicros(expires)
	}
	if err := json.Unmarshal([]byte(approvers), &a.Approvers); err != nil {
		return Approval{}, fmt.Errorf("store: approval %s approvers: %w", a.ID, err)
	}
	return a, nil
}

// CreateApproval stores a pending approval request and its "requested" audit
// row in one transaction.
func (s *Store) CreateApproval(ctx context.Context, na NewApproval) (Approval, error) {
	if na.TaskID == "" || na.Tool == "" || na.CallHash == "" {
		return Approval{}, invalid("approval needs a task id, a tool and a call hash")
	}
	now := s.now()
	expires := int64(noDeadline)
	switch {
	case na.NoDeadline && !na.ExpiresAt.IsZero():
		return Approval{}, invalid("approval without a deadline has an expiry %s", na.ExpiresAt.Format(time.RFC3339))
	case na.NoDeadline:
	case !na.ExpiresAt.After(now):
		return Approval{}, invalid("approval deadline %s is not in the future", na.ExpiresAt.Format(time.RFC3339))
	default:
		expires = micros(na.ExpiresAt)
	}
	approvers := na.Approvers
	if approvers == nil {
		approvers = []string{}
	}
	aj, err := json.Marshal(approvers)
	if err != nil {
		return Approval{}, fmt.Errorf("store: encode approvers: %w", err)
	}
	scopes := na.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	sj, err := json.Marshal(scopes)
	if err != nil {
		return Approval{}, fmt.Errorf("store: encode scopes: %w", err)
	}
	instructors := na.Instructors
	if instructors == nil {
		instructors = []string{}
	}
	ij, err := json.Marshal(instructors)
	if err != nil {
		return Approval{}, fmt.Errorf("store: encode instructors: %w", err)
	}
	var a Approval
	err = s.inTx(ctx, func(tx txn) error {
		a, err = scanApproval(tx.queryRow(ctx, `INSERT INTO approvals (id, task_id, tool, subject, call_hash,
				preview, requester, approvers, state, created_at, expires_at, scopes, instructors)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+approvalCols,
			ids.Sortable("a_", now), na.TaskID, na.Tool, na.Subject, na.CallHash, na.Preview, na.Requester,
			string(aj), string(ApprovalPending), micros(now), expires, string(sj), string(ij)))
		if err != nil {
			return fmt.Errorf("store: insert approval: %w", err)
		}
		return s.audit(ctx, tx, a, "requested", na.Requester, "", now)
	})
	if err != nil {
		return Approval{}, err
	}
	if expires != noDeadline {
		s.deadlines.signal("")
	}
	return a, nil
}

// NextApprovalDeadline is the earliest deadline of a pending approval
// (one due already included), zero when no pending approval has one: an
// expirer waits for it rather than sweeping on a timer.
func (s *Store) NextApprovalDeadline(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	if err := s.db.queryRow(ctx, "SELECT MIN(expires_at) FROM approvals WHERE state = ? AND expires_at <> ?",
		string(ApprovalPending), noDeadline).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("store: next approval deadline: %w", err)
	}
	return fromNullMicros(at), nil
}

// ApprovalDeadlines returns a channel that receives when this process
// stores an approval with a deadline (CreateApproval), for an expirer
// waiting for the next deadline; stop ends the subscription. An approval
// stored by another process sends nothing here.
func (s *Store) ApprovalDeadlines() (<-chan struct{}, func()) { return s.deadlines.subscribe("") }

func (s *Store) audit(ctx context.Context, tx txn, a Approval, action, actor, detail string, now time.Time) error {
	if _, err := tx.exec(ctx, `INSERT INTO approval_audit (id, approval_id, task_id, action, actor, detail, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, ids.Sortable("au_", now), a.ID, a.TaskID, action, actor, detail, micros(now)); err != nil {
		return fmt.Errorf("store: write approval audit: %w", err)
	}
	return nil
}

// Approval returns the approval with id, or an error wrapping ErrNotFound.
func (s *Store) Approval(ctx context.Context, id string) (Approval, error) {
	return getApproval(ctx, s.db, id)
}

func getApproval(ctx context.Context, q querier, id string) (Approval, error) {
	a, err := scanApproval(q.queryRow(ctx, "SELECT "+approvalCols+" FROM approvals WHERE id = ?", id))
	if isNoRows(err) {
		return Approval{}, fmt.Errorf("store: approval %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("store: read approval %s: %w", id, err)
	}
	return a, nil
}

// DecideApproval records approver's decision on approval id, exactly once:
// a single compare-and-swap from pending that also requires the deadline not
// to have passed and, when callHash is not "", the call hash to match. The
// audit row is written in the same transaction. It returns the decided
// approval, or an error matching ErrNotFound, ErrAlreadyDecided (a
// *ApprovalDecidedError holding the winner's decision), ErrExpired,
// ErrCallMismatch or ErrNotApprover. A refused decision changes nothing.
//
// The store enforces the stored approver list; policy such as "the
// requester may not approve their own call" belongs to the caller, which
// builds that list.
func (s *Store) DecideApproval(ctx context.Context, id string, d Decision, approver, callHash string) (Approval, error) {
	return s.Decide(ctx, id, DecideOpts{Decision: d, Approver: approver, CallHash: callHash})
}

// DecideOpts is one decision on an approval; see Decide.
type DecideOpts struct {
	Decision Decision
	Approver string // required
	CallHash string // "" skips the hash check
	// Scope is the grant chosen with AllowTask; it must be one of the
	// approval's Scopes. "" picks the first offered scope.
	Scope string
	// Note is a message for the model, kept with the decision.
	Note string
	// Grant is the standing grant an AllowAlways decision records; its
	// Scope must be one of the approval's Scopes ("" picks the first);
	// its ApprovalID, TaskID and GrantedBy are filled in here. Required
	// with AllowAlways, ignored otherwise.
	Grant *NewStandingGrant
}

// Decide is DecideApproval with a chosen scope and a note. An AllowTask
// scope that was not offered is rejected as invalid and changes nothing.
func (s *Store) Decide(ctx context.Context, id string, o DecideOpts) (Approval, error) {
	d, approver, callHash := o.Decision, o.Approver, o.CallHash
	state := ApprovalAllowed
	switch d {
	case AllowOnce, AllowTask:
	case AllowAlways:
		if o.Grant == nil {
			return Approval{}, invalid("allow_always needs the standing grant to record")
		}
	case Deny, StopPublish:
		state = ApprovalDenied
	default:
		return Approval{}, invalid("decision %q is not allow_once, allow_task, allow_always, deny or stop_publish", d)
	}
	if approver == "" {
		return Approval{}, invalid("decision without an approver")
	}
	now := s.now()
	var grant NewStandingGrant
	if d == AllowAlways {
		grant = *o.Grant
		grant.GrantedBy = approver
		// The scope is checked against the offered ones below.
		if err := grant.validateTarget(now); err != nil {
			return Approval{}, err
		}
		o.Scope = strings.TrimSpace(grant.Scope)
	}
	var out Approval
	err := s.inTx(ctx, func(tx txn) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		// The approver list never changes after creation, so checking it
		// before the swap is race-free.
		if len(cur.Approvers) > 0 && !slices.Contains(cur.Approvers, approver) {
			return fmt.Errorf("store: approval %s: %w", id, ErrNotApprover)
		}
		scope := ""
		if d == AllowTask || d == AllowAlways {
			scope = o.Scope
			switch {
			case scope == "" && len(cur.Scopes) > 0:
				scope = cur.Scopes[0]
			case scope != "" && !slices.Contains(cur.Scopes, scope):
				return invalid("scope %q was not offered for approval %s", scope, id)
			}
		}
		a, err := scanApproval(tx.queryRow(ctx, `UPDATE approvals
			SET state = ?, decision = ?, decided_by = ?, decided_at = ?, scope = ?, note = ?
			WHERE id = ? AND state = ? AND (expires_at = ? OR expires_at > ?) AND (? = '' OR call_hash = ?)
			RETURNING `+approvalCols,
			string(state), string(d), approver, micros(now), scope, o.Note,
			id, string(ApprovalPending), noDeadline, micros(now), callHash, callHash))
		if isNoRows(err) {
			// Lost: classify against the row as it is now.
			cur, err := getApproval(ctx, tx, id)
			switch {
			case err != nil:
				return err
			case cur.State != ApprovalPending:
				return &ApprovalDecidedError{Approval: cur}
			case !cur.NoDeadline() && !cur.ExpiresAt.After(now):
				return fmt.Errorf("store: approval %s: %w", id, ErrExpired)
			default:
				return fmt.Errorf("store: approval %s: %w", id, ErrCallMismatch)
			}
		}
		if err != nil {
			return fmt.Errorf("store: decide approval %s: %w", id, err)
		}
		out = a
		if d == AllowAlways {
			grant.Scope, grant.ApprovalID, grant.TaskID = scope, a.ID, a.TaskID
			if err := grant.validate(now); err != nil {
				return err
			}
			if _, err := addStandingGrant(ctx, tx, grant, now); err != nil {
				return err
			}
		}
		return s.audit(ctx, tx, a, string(d), approver, o.Note, now)
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

// PendingApprovals lists pending approvals, oldest first; taskID "" lists
// those of every task. Pending rows past their deadline are included until
// ExpireApprovals sweeps them; check ExpiresAt (zero: no deadline).
func (s *Store) PendingApprovals(ctx context.Context, taskID string) ([]Approval, error) {
	q := "SELECT " + approvalCols + " FROM approvals WHERE state = ?"
	args := []any{string(ApprovalPending)}
	if taskID != "" {
		q += " AND task_id = ?"
		args = append(args, taskID)
	}
	return s.approvals(ctx, q+" ORDER BY created_at, id", args...)
}

func (s *Store) approvals(ctx context.Context, q string, args ...any) ([]Approval, error) {
	rs, err := s.db.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	defer rs.Close()
	var out []Approval
	for rs.Next() {
		a, err := scanApproval(rs)
		if err != nil {
			return nil, fmt.Errorf("store: list approvals: %w", err)
		}
		out = append(out, a)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	return out, nil
}

// ExpireApprovals moves every pending approval whose deadline is at or before
// now to expired (which means deny), with an "expired" audit row each, and
// returns them so the caller can wake their tasks. An approval without a
// deadline never expires. Safe to run on several nodes at once: each
// approval expires exactly once.
func (s *Store) ExpireApprovals(ctx context.Context, now time.Time) ([]Approval, error) {
	var out []Approval
	err := s.inTx(ctx, func(tx txn) error {
		rs, err := tx.query(ctx, `UPDATE approvals SET state = ?, decided_at = ?
			WHERE state = ? AND expires_at <> ? AND expires_at <= ? RETURNING `+approvalCols,
			string(ApprovalExpired), micros(now), string(ApprovalPending), noDeadline, micros(now))
		if err != nil {
			return fmt.Errorf("store: expire approvals: %w", err)
		}
		for rs.Next() {
			a, err := scanApproval(rs)
			if err != nil {
				rs.Close()
				return fmt.Errorf("store: expire approvals: %w", err)
			}
			out = append(out, a)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return fmt.Errorf("store: expire approvals: %w", err)
		}
		for _, a := range out {
			if err := s.audit(ctx, tx, a, string(ApprovalExpired), "system", "", now); err != nil {
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

// ApprovalAudit returns the audit trail of approval id, oldest first.
func (s *Store) ApprovalAudit(ctx context.Context, id string) ([]AuditEntry, error) {
	rs, err := s.db.query(ctx, `SELECT id, approval_id, task_id, action, actor, detail, created_at
		FROM approval_audit WHERE approval_id = ? ORDER BY created_at, id`, id)
	if err != nil {
		return nil, fmt.Errorf("store: read approval audit: %w", err)
	}
	defer rs.Close()
	var out []AuditEntry
	for rs.Next() {
		var e AuditEntry
		var at int64
		if err := rs.Scan(&e.ID, &e.ApprovalID, &e.TaskID, &e.Action, &e.Actor, &e.Detail, &at); err != nil {
			return nil, fmt.Errorf("store: read approval audit: %w", err)
		}
		e.Time = fromMicros(at)
		out = append(out, e)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read approval audit: %w", err)
	}
	return out, nil
}
