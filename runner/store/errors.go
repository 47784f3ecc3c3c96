package store

import (
	"errors"
	"fmt"
)

// Sentinel conditions. Errors returned by the store wrap these, so callers
// test with errors.Is.
var (
	// ErrNotFound: the task, approval, journal entry or token does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrStateConflict: a compare-and-swap found the row in another state.
	// The concrete error is a *StateError carrying the state it found.
	ErrStateConflict = errors.New("store: state conflict")
	// ErrAlreadyDecided: the approval was decided (or expired) before this
	// decision. The concrete error is an *ApprovalDecidedError.
	ErrAlreadyDecided = errors.New("store: approval already decided")
	// ErrExpired: the approval's deadline passed; a late decision is refused.
	ErrExpired = errors.New("store: approval expired")
	// ErrCallMismatch: the decision was bound to a different call hash than
	// the one the approval was created for.
	ErrCallMismatch = errors.New("store: approval call hash mismatch")
	// ErrNotApprover: the decider is not in the approval's approver list.
	ErrNotApprover = errors.New("store: not an allowed approver")
	// ErrAlreadyStarted: a journal entry for this call exists already.
	ErrAlreadyStarted = errors.New("store: tool call already journaled")
	// ErrInvalid: the input was rejected before anything was written.
	ErrInvalid = errors.New("store: invalid input")
)

// errNoRows is what row.Scan reports for an empty result on both databases.
var errNoRows = errors.New("store: no rows")

// StateError reports a task whose state was not one the caller expected.
type StateError struct {
	TaskID  string
	Current State
}

func (e *StateError) Error() string {
	return fmt.Sprintf("store: task %s is %s", e.TaskID, e.Current)
}

// Is makes a *StateError match ErrStateConflict.
func (e *StateError) Is(target error) bool { return target == ErrStateConflict }

// ApprovalDecidedError reports a decision that lost the race: Approval is the
// row as it was decided (state, decision, decided_by, decided_at).
type ApprovalDecidedError struct {
	Approval Approval
}

func (e *ApprovalDecidedError) Error() string {
	return fmt.Sprintf("store: approval %s is already %s", e.Approval.ID, e.Approval.State)
}

// Is makes an *ApprovalDecidedError match ErrAlreadyDecided.
func (e *ApprovalDecidedError) Is(target error) bool { return target == ErrAlreadyDecided }

// InputError is input the store rejected before writing anything. Msg is
// written for a person (it names the field, never a secret); it matches
// ErrInvalid.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return "store: invalid input: " + e.Msg }

// Is makes an *InputError match ErrInvalid.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

func invalid(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}
