package runner

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"reasonix/runner/store"
)

// ApprovalFilter selects approvals for Approvals. Zero fields do not filter.
type ApprovalFilter struct {
	State  store.ApprovalState // pending, allowed, denied, expired
	TaskID string
	Limit  int // default 100, at most 1000
}

// Approvals lists approvals matching f, oldest first.
func (s *Service) Approvals(ctx context.Context, f ApprovalFilter) ([]store.Approval, error) {
	switch f.State {
	case "", store.ApprovalPending, store.ApprovalAllowed, store.ApprovalDenied, store.ApprovalExpired:
	default:
		return nil, invalidf("approval state %q is not pending, allowed, denied or expired", f.State)
	}
	list, err := s.st.ListApprovals(ctx, f.State, f.TaskID, f.Limit)
	return list, mapStoreErr(err, "the approval list")
}

// Approval returns approval id; an unknown id is an *Error of kind
// ErrNotFound.
func (s *Service) Approval(ctx context.Context, id string) (store.Approval, error) {
	a, err := s.st.Approval(ctx, id)
	return a, mapStoreErr(err, "approval "+id)
}

// Decision is a person's answer to an approval request.
type Decision struct {
	ApprovalID string
	// Decision is one of the choices AllowOnce, AllowTask, AllowAlways
	// and Deny ("allow_once", "allow_task", "allow_always", "deny"), as a
	// string: it arrives as one, and Decide refuses any other. A budget
	// card (an approval of tool "budget") takes allow_once (+ the same
	// budget), deny (stop) and stop_publish (stop and publish what exists).
	Decision string
	// Approver is the principal id of who decides, taken from their
	// credential ("token:bob", "slack:T1/U2"), never from the request.
	Approver string
	// Role is the approver's role, as their credential carries it (an API
	// token's). "" asks the service to establish it: a chat identity's
	// role comes from ChatPrincipal; any other principal without a role
	// may not decide.
	Role store.Role
	// Note goes to the model with a denial.
	Note string
	// Scope, with allow_task, picks one of the offered scopes; "" takes the
	// first. With allow_always it is the standing grant's rule, one of the
	// offered scopes; "" takes the suggested one (SuggestedScope).
	Scope string
	// GrantFor, with allow_always, is what the standing grant applies to:
	// "workspace", "schedule" or "webhook" — the task's own; "" is the
	// narrowest the task has (its schedule or webhook, else its
	// workspace).
	GrantFor string
	// GrantExpires, with allow_always, ends the standing grant; zero never
	// does.
	GrantExpires time.Time
	// CallHash, when set, binds the decision to the call the approver saw;
	// a different call is refused with ErrConflict.
	CallHash string
}

// Decide records d exactly once and wakes the task, whose next run executes
// or refuses exactly the approved call. Who may decide is MayDecide's rule.
// Errors wrap ErrInvalid, ErrNotFound, ErrForbidden (see MayDecide),
// ErrExpired, or ErrConflict (decided already, or a different call).
func (s *Service) Decide(ctx context.Context, d Decision) (store.Approval, error) {
	dec := store.Decision(d.Decision)
	switch dec {
	case store.AllowOnce, store.AllowTask, store.AllowAlways, store.Deny, store.StopPublish:
	default:
		return store.Approval{}, invalidf("decision %q is not allow_once, allow_task, allow_always, deny or stop_publish", d.Decision)
	}
	d.Approver = strings.TrimSpace(d.Approver)
	if d.Approver == "" || len(d.Approver) > maxIDLen {
		return store.Approval{}, invalidf("the approver must be named (at most %d bytes)", maxIDLen)
	}
	if len(d.Note) > maxPreview {
		return store.Approval{}, invalidf("the note is limited to %d bytes", maxPreview)
	}
	subject := "approval " + d.ApprovalID
	a, err := s.st.Approval(ctx, d.ApprovalID)
	if err != nil {
		return store.Approval{}, mapStoreErr(err, subject)
	}
	if err := budgetChoice(a, dec); err != nil {
		return store.Approval{}, err
	}
	task, err := s.st.Task(ctx, a.TaskID)
	if err != nil {
		return store.Approval{}, mapStoreErr(err, "task "+a.TaskID)
	}
	p := Principal{ID: d.Approver, Role: d.Role}
	if p.Role == "" {
		if p, err = s.ChatPrincipal(ctx, d.Approver); errors.Is(err, ErrInvalid) {
			return store.Approval{}, failf(ErrForbidden, "%s has no role that decides approvals", d.Approver)
		} else if err != nil {
			return store.Approval{}, err
		}
	}
	if err := s.mayDecide(p, task, a); err != nil {
		return store.Approval{}, err
	}
	opts := store.DecideOpts{Decision: dec, Approver: d.Approver, CallHash: d.CallHash, Scope: d.Scope, Note: d.Note}
	var target grantTarget
	if dec == store.AllowAlways {
		if err := s.mayGrant(p, task); err != nil {
			return store.Approval{}, err
		}
		if target, err = grantTargetOf(task, d.GrantFor); err != nil {
			return store.Approval{}, err
		}
		scope := cmp.Or(strings.TrimSpace(d.Scope), SuggestedScope(a.Scopes))
		if scope == "" {
			return store.Approval{}, invalidf("approval %s offers no scope to allow always (an ask rule needs a person every time)", a.ID)
		}
		opts.Grant = &store.NewStandingGrant{Scope: scope, For: target.For, Name: target.Name, ExpiresAt: d.GrantExpires}
	}
	decided, err := s.st.Decide(ctx, a.ID, opts)
	if err != nil {
		return store.Approval{}, mapStoreErr(err, subject)
	}
	s.metrics.approvals.WithLabelValues(string(dec)).Inc()
	ev := map[string]any{
		"approval_id": a.ID, "decision": dec, "approver": d.Approver, "scope": decided.Scope, "note": d.Note,
	}
	if dec == store.AllowAlways {
		ev["grant_for"], ev["grant_name"] = target.For, target.Name
		if !d.GrantExpires.IsZero() {
			ev["grant_expires_at"] = d.GrantExpires
		}
	}
	s.emitLogged(ctx, a.TaskID, "approval_decided", ev)
	s.prDecided(ctx, decided)
	if err := s.st.Wake(ctx, a.TaskID); err != nil && !errors.Is(err, store.ErrNotFound) {
		// The decision stands; the job still resumes when its snooze ends.
		s.log.Warn("runner: wake after decision", "task", a.TaskID, "err", err)
	}
	return decided, nil
}

// approvalExpired reports an approval the expiry sweep (see
// startMaintenance) expired; the sweep then wakes its task, whose run
// refuses the call with code expired.
func (s *Service) approvalExpired(ctx context.Context, a store.Approval) {
	s.metrics.approvals.WithLabelValues("expired").Inc()
	s.emitLogged(ctx, a.TaskID, "approval_decided", map[string]any{"approval_id": a.ID, "decision": "expired"})
}

// SuggestedScope is the rule "Allow always" grants unless the approver
// picks another of scopes (an approval's offered scopes, best first): the
// command prefix for a shell call (Bash(go test:*)), else the first — the
// exact path of a file edit, the tool of another call. "" when none is
// offered.
func SuggestedScope(scopes []string) string {
	for _, s := range scopes {
		if strings.HasPrefix(s, "Bash(") && strings.HasSuffix(s, ":*)") {
			return s
		}
	}
	if len(scopes) > 0 {
		return scopes[0]
	}
	return ""
}
