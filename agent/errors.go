package agent

import (
	"errors"
	"fmt"
	"time"
)

// Classes of provider failure. A *ProviderError matches exactly one of them
// with errors.Is, so callers classify by identity, never by message text.
var (
	// ErrTransient: the request may succeed if repeated (network, 5xx, 408, 409).
	ErrTransient = errors.New("provider: transient failure")
	// ErrRateLimited: the provider asked us to slow down (429). It is also transient.
	ErrRateLimited = errors.New("provider: rate limited")
	// ErrRejected: the provider refused the request (400, 401, 403, 404); repeating it will not help.
	ErrRejected = errors.New("provider: request rejected")
	// ErrContextTooLong: the conversation no longer fits the model's context window.
	ErrContextTooLong = errors.New("provider: context too long")
	// ErrStream: the response stream was malformed, cut or went idle.
	ErrStream = errors.New("provider: broken stream")
	// ErrEmptyAnswer: the response ended without any text or tool call. It is
	// not a success (the run would end with nothing done and nothing said);
	// a provider may ask once more before reporting it.
	ErrEmptyAnswer = errors.New("provider: empty answer")
	// ErrOutputTooLarge: the answer exceeded the configured output bounds and
	// reading it was stopped; asking again would likely produce the same.
	ErrOutputTooLarge = errors.New("provider: output too large")
)

// ProviderError is a failed model request. Message is the provider's own
// explanation with credentials removed; it is safe to log but not meant for
// chat users.
type ProviderError struct {
	Class      error         // one of the Err* classes above
	Status     int           // HTTP status, 0 when none was received
	RetryAfter time.Duration // the provider's requested wait, 0 when none
	Message    string
}

func (e *ProviderError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Class.Error()
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Class, e.Status, msg)
	}
	return fmt.Sprintf("%s: %s", e.Class, msg)
}

// Is reports whether target is the error's class. A rate limit is also transient.
func (e *ProviderError) Is(target error) bool {
	if target == e.Class {
		return true
	}
	return target == ErrTransient && (e.Class == ErrRateLimited || e.Class == ErrStream)
}

// Reason names the failure class of err for reports and skip cascades:
// "provider.transient", "provider.rejected", "provider.empty_answer",
// "provider.output_too_large", "context.exhausted" or "unclassified".
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrEmptyAnswer):
		return "provider.empty_answer"
	case errors.Is(err, ErrOutputTooLarge):
		return "provider.output_too_large"
	case errors.Is(err, ErrContextTooLong):
		return "context.exhausted"
	case errors.Is(err, ErrRejected):
		return "provider.rejected"
	case errors.Is(err, ErrTransient):
		return "provider.transient"
	default:
		return "unclassified"
	}
}
