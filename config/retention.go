package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention is how long something of a finished task is kept
// ([runner] keep_worktrees, [runner] retain). A file writes it as a
// number of days ("7d", "90d"), a duration string ("36h") or "none":
// kept for ever, never collected. The zero value is unset (the default
// applies); NoRetention is "none". "0" and bare integers are refused:
// "remove at once" is never what anyone means by a retention, and a bare
// number would be nanoseconds to the decoder.
type Retention time.Duration

// NoRetention is "none": never removed.
const NoRetention Retention = -1

// Defaults and bounds of the [runner] retention keys.
const (
	DefaultKeepWorktrees = Retention(7 * 24 * time.Hour)
	DefaultRetain        = Retention(90 * 24 * time.Hour)
	MinKeepWorktrees     = Retention(time.Hour)
	MinRetain            = Retention(24 * time.Hour)
)

// None reports whether r is "none".
func (r Retention) None() bool { return r == NoRetention }

// Or is r, or def when r is unset.
func (r Retention) Or(def Retention) Retention {
	if r == 0 {
		return def
	}
	return r
}

// Duration is r as a duration: negative for "none", 0 for unset.
func (r Retention) Duration() time.Duration { return time.Duration(r) }

// String is r as a file writes it: "none", whole days as "7d", else a
// duration; "" unset.
func (r Retention) String() string {
	day := Retention(24 * time.Hour)
	switch {
	case r.None():
		return "none"
	case r == 0:
		return ""
	case r%day == 0:
		return strconv.FormatInt(int64(r/day), 10) + "d"
	}
	return time.Duration(r).String()
}

// ParseRetention reads "none", "<n>d" or a positive duration string.
func ParseRetention(s string) (Retention, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "none") {
		return NoRetention, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > 0 && days <= 100*365 {
			return Retention(time.Duration(days) * 24 * time.Hour), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return Retention(d), nil
	}
	return 0, fmt.Errorf("must be a number of days such as \"7d\", a duration such as \"36h\", or \"none\" to keep for ever (got %q)", s)
}

// UnmarshalText reads what ParseRetention reads.
func (r *Retention) UnmarshalText(b []byte) error {
	v, err := ParseRetention(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// MarshalText writes r as UnmarshalText reads it.
func (r Retention) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// checkRetention checks a retention key against its minimum.
func checkRetention(p *problems, source, field string, r, least Retention) {
	if r != 0 && !r.None() && r < least {
		p.add(source, field, "must be at least %s, or \"none\" (got %s)", least, r)
	}
}
