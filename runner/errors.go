package runner

import (
	"errors"
	"fmt"

	"reasonix/internal/ids"
	"reasonix/runner/store"
)

// Conditions the Service reports. Every error a Service method returns
// because of the request (rather than a broken store) is an *Error whose
// Kind is one of them, so callers map them with errors.Is.
var (
	// ErrNotFound: the task or approval does not exist.
	ErrNotFound = errors.New("runner: not found")
	// ErrInvalid: the request was rejected before anything changed.
	ErrInvalid = errors.New("runner: invalid request")
	// ErrConflict: the task or approval is not in a state that allows the
	// request (already decided, already finished, a different call).
	ErrConflict = errors.New("runner: conflict")
	// ErrExpired: the approval's deadline passed.
	ErrExpired = errors.New("runner: approval expired")
	// ErrForbidden: the principal may not do this (its role, its posture
	// limit, another principal's task, or deciding its own task's calls).
	ErrForbidden = errors.New("runner: not allowed")
	// ErrUnavailable: the service is not running (starting or shutting
	// down); try again later or on another node.
	ErrUnavailable = errors.New("runner: service unavailable")
)

// Error is a Service error a person may read. It is built where the
// problem is found, so every surface — the HTTP API, the CLI, a chat
// thread — shows Message as it is, without rewording errors.
type Error struct {
	// Kind is the condition: one of the Err* values above.
	Kind error
	// Message says what was wrong and, where it helps, what to do. It is
	// safe to show to whoever made the request.
	Message string
	// Err is the internal cause, for the log only; nil when there is none.
	Err error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.Error() + ": " + e.Message
	}
	return e.Kind.Error() + ": " + e.Message + ": " + e.Err.Error()
}

// Unwrap exposes the condition and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func failf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) error { return failf(ErrInvalid, format, args...) }

// mapStoreErr translates the store's conditions about subject ("task t_1",
// "approval a_1") into the Service's. Errors that are not conditions (the
// database is down) pass unchanged: the caller logs them, the person sees
// a reference.
func mapStoreErr(err error, subject string) error {
	var (
		input   *store.InputError
		state   *store.StateError
		decided *store.ApprovalDecidedError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return &Error{Kind: ErrNotFound, Message: subject + " not found", Err: err}
	case errors.As(err, &input):
		return &Error{Kind: ErrInvalid, Message: input.Msg, Err: err}
	case errors.Is(err, store.ErrExpired):
		return &Error{Kind: ErrExpired, Message: subject + " expired before it was decided", Err: err}
	case errors.Is(err, store.ErrNotApprover):
		return &Error{Kind: ErrForbidden, Message: "you are not among the approvers of " + subject, Err: err}
	case errors.As(err, &decided):
		return &Error{Kind: ErrConflict, Message: fmt.Sprintf("%s was already decided (%s)", subject, decided.Approval.State), Err: err}
	case errors.Is(err, store.ErrCallMismatch):
		return &Error{Kind: ErrConflict, Message: subject + " was requested for a different call", Err: err}
	case errors.As(err, &state):
		return &Error{Kind: ErrConflict, Message: subject + " " + stateWords(state.Current), Err: err}
	}
	return err
}

// stateWords is a task state as the predicate of a sentence: "task t_1
// has already succeeded".
func stateWords(s store.State) string {
	switch s {
	case store.StateWaitingApproval:
		return "is waiting for an approval"
	case store.StateWaitingCI:
		return "is waiting for CI"
	case store.StateBudgetExhausted:
		return "ran out of budget"
	case store.StateCancelled, store.StateInterrupted:
		return "was " + string(s)
	case store.StateSucceeded, store.StateFailed:
		return "has already " + string(s)
	}
	return "is " + string(s) // queued, running, blocked
}

// newRef returns a short reference id that a person can quote and that the
// log line with the internal detail carries.
func newRef() string { return ids.Hex(4) }
