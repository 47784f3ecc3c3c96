package config

import (
	"fmt"
	"strings"
	"time"
)

// TTL is an approval_ttl: how long an approval request waits for an
// answer before it is denied. A file writes it as a duration string
// ("30m", "2h") or as "none": no deadline at all — the request waits,
// reminded of every [bot] approval_remind, until someone decides it or
// the task is cancelled. The zero value is unset (the next level's value
// applies); NoTTL is "none". A bare integer is refused: the decoder would
// take it for nanoseconds, which no one means.
type TTL time.Duration

// NoTTL is approval_ttl = "none".
const NoTTL TTL = -1

// None reports whether t is "none".
func (t TTL) None() bool { return t == NoTTL }

// Duration is t as a duration: 0 for unset and for "none" (check None).
func (t TTL) Duration() time.Duration {
	if t < 0 {
		return 0
	}
	return time.Duration(t)
}

// String is t as a file writes it: "none", a duration, or "" unset.
func (t TTL) String() string {
	switch {
	case t.None():
		return "none"
	case t == 0:
		return ""
	}
	return time.Duration(t).String()
}

// UnmarshalText reads "none" or a duration string.
func (t *TTL) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.EqualFold(s, "none") {
		*t = NoTTL
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("must be a duration string such as \"30m\" or \"2h\", or \"none\" for no deadline (got %q)", s)
	}
	*t = TTL(d)
	return nil
}

// MarshalText writes t as UnmarshalText reads it.
func (t TTL) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// checkEntryTTL checks an entry's own approval_ttl: unset (0), "none", or
// a duration from 1m to MaxApprovalTTL.
func checkEntryTTL(p *problems, source, field string, t TTL) {
	if t != 0 && !t.None() && (t < TTL(time.Minute) || t > TTL(MaxApprovalTTL)) {
		p.add(source, field, "must be a duration from \"1m\" to \"24h\", or \"none\" (got %s)", t)
	}
}

// Defaults and bounds of [bot] approval_remind.
const (
	DefaultApprovalRemind = 4 * time.Hour
	MinApprovalRemind     = time.Minute
	MaxApprovalRemind     = 7 * 24 * time.Hour
)
