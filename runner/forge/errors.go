package forge

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Conditions a caller acts on; every error of a Forge that comes from an
// answer of the forge wraps one of them or is an *APIError of another status.
var (
	// ErrUnauthorized: the forge refused the token (401): it is wrong,
	// expired or revoked.
	ErrUnauthorized = errors.New("the forge refused the token; check that the variable holds a valid, unexpired token")
	// ErrForbidden: the token is valid but may not do this (403).
	ErrForbidden = errors.New("the token may not do this; grant it the missing scope or role")
	// ErrNotFound: the project or object does not exist or the token
	// cannot see it (forges answer 404 for both).
	ErrNotFound = errors.New("not found, or the token has no access to it")
	// ErrNoPush: the token may read the project but not push to it.
	ErrNoPush = errors.New("the token may not push to the project; it needs write (GitHub) or Developer (GitLab) access")
	// ErrExists: an open pull request for the head branch already exists.
	ErrExists = errors.New("an open pull request for this branch already exists")
	// ErrRateLimited: the forge asks to slow down (429, or GitHub's 403
	// with no requests left).
	ErrRateLimited = errors.New("the forge's rate limit is reached; try again later")
	// ErrNoLogs: the forge keeps no log for this check.
	ErrNoLogs = errors.New("the forge keeps no log for this check")
)

// APIError is an unsuccessful answer of the forge. Message is the forge's
// own text, bounded and with the token removed.
type APIError struct {
	Kind    Kind
	Op      string // what was attempted, e.g. "open pull request"
	Status  int
	Message string
	Err     error // the condition, or nil when none applies
	// RetryAfter is how long the forge asked to wait (Retry-After, or the
	// rate limit's reset time); zero when it did not say.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "forge: %s: %s: HTTP %d", e.Kind, e.Op, e.Status)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Message != "" {
		fmt.Fprintf(&b, " (%s)", e.Message)
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Err }

// maxMessage bounds the forge's text kept in an error.
const maxMessage = 300

// redacted replaces the token wherever server or transport text repeats it.
const redacted = "[redacted]"

// safeText removes token from s, then trims and bounds it. The token goes
// first so no prefix of it survives the cut.
func safeText(token, s string) string {
	s = strings.TrimSpace(s)
	if token != "" {
		s = strings.ReplaceAll(s, token, redacted)
	}
	if utf8.RuneCountInString(s) > maxMessage {
		s = string([]rune(s)[:maxMessage]) + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// retryAfter reads how long a refusing forge wants the caller to wait:
// Retry-After in seconds or as a date, else the reset time of the rate
// limit window (GitHub X-RateLimit-Reset, GitLab RateLimit-Reset, both Unix
// seconds). It never returns a negative wait and caps it at an hour, so a
// skewed clock cannot park a caller for days.
func retryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil {
			d = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	} else {
		for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
			if unix, err := strconv.ParseInt(strings.TrimSpace(h.Get(k)), 10, 64); err == nil {
				d = time.Unix(unix, 0).Sub(now)
				break
			}
		}
	}
	return min(max(d, 0), time.Hour)
}
