package runner

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"reasonix/runner/store"
)

// Conditions the Service reports. Every error a Service method returns wraps
// at most one of them, so the HTTP API maps them to status codes with
// errors.Is; the message after the prefix is safe to show to a person.
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
	// ErrForbidden: the approver may not decide this approval.
	ErrForbidden = errors.New("runner: not allowed")
	// ErrUnavailable: the service is not running (starting or shutting
	// down); try again later or on another node.
	ErrUnavailable = errors.New("runner: service unavailable")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// mapStoreErr translates the store's conditions into the Service's.
func mapStoreErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	case errors.Is(err, store.ErrExpired):
		return fmt.Errorf("%w: %w", ErrExpired, err)
	case errors.Is(err, store.ErrNotApprover):
		return fmt.Errorf("%w: %w", ErrForbidden, err)
	case errors.Is(err, store.ErrAlreadyDecided), errors.Is(err, store.ErrCallMismatch), errors.Is(err, store.ErrStateConflict):
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// newRef returns a short reference id that a person can quote and that the
// log line with the internal detail carries.
func newRef() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
