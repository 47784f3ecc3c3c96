package runner

import (
	"context"
	"errors"

	"reasonix/policy"
	"reasonix/runner/store"
)

// ErrUnauthenticated: the credential is unknown or revoked.
var ErrUnauthenticated = errors.New("runner: not authenticated")

// Principal is who makes a request, as established by a credential — never
// by a name in the request. ID is what tasks record as their requester and
// approvals as their decider ("token:alice"); checks compare it exactly.
// Chat identities ("slack:T1/U2") are principals of the same shape.
type Principal struct {
	ID   string
	Role store.Role
	// MaxPosture is the highest posture the principal's tasks may ask for.
	MaxPosture policy.Posture
}

// Authenticate turns an API bearer secret into its principal. An unknown or
// revoked secret is an *Error of kind ErrUnauthenticated, and the message
// does not say which.
func (s *Service) Authenticate(ctx context.Context, secret string) (Principal, error) {
	t, err := s.st.Authenticate(ctx, secret)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, &Error{Kind: ErrUnauthenticated, Message: "a valid bearer token is required", Err: err}
	}
	if err != nil {
		return Principal{}, err
	}
	return Principal{ID: t.Principal(), Role: t.Role, MaxPosture: t.MaxPosture}, nil
}

// MayDecide reports whether p may decide approvals at all; whether it may
// decide one of its own tasks is Decide's concern.
func (p Principal) MayDecide() error {
	if !p.Role.AtLeast(store.RoleApprove) {
		return failf(ErrForbidden, "%s may submit tasks but not decide approvals (role %s); an approve or admin token is needed", p.ID, p.Role)
	}
	return nil
}

// MayControl reports whether p may message, cancel or resume task t: its
// own tasks, or any task for an admin.
func (p Principal) MayControl(t store.Task) error {
	if p.Role.AtLeast(store.RoleAdmin) || (p.ID != "" && p.ID == t.Requester) {
		return nil
	}
	return failf(ErrForbidden, "task %s belongs to %s; only its requester or an admin may change it", t.ID, t.Requester)
}

// allowsPosture reports whether a task of p may run under posture.
func (p Principal) allowsPosture(posture policy.Posture) error {
	if p.MaxPosture == "" || posture.Rank() <= p.MaxPosture.Rank() {
		return nil
	}
	return failf(ErrForbidden, "posture %s is above %s's limit (%s); ask for a lower posture or use a token created with --max-posture %s",
		posture, p.ID, p.MaxPosture, posture)
}
