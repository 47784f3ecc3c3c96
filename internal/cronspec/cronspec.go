// Package cronspec is the one parse of a schedule's cron expression and time
// zone. The configuration validates [[schedules]] entries with it at load and
// the runner computes next times with the value it returns, so a spec that
// loads is exactly a spec that fires.
package cronspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	// The binary is static and may run where /usr/share/zoneinfo is
	// missing; schedules name IANA zones, so the database ships inside.
	_ "time/tzdata"
)

// parser accepts the five standard fields and descriptors (@daily,
// @every 10m); seconds are not a field, so "every second" is @every 1s.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxExpr bounds what is handed to the parser; real expressions are short.
const maxExpr = 256

// Spec is a parsed, possible schedule. It is immutable and safe for
// concurrent use.
type Spec struct {
	sched cron.Schedule
	loc   *time.Location
	every time.Duration // > 0 for @every: a constant delay
}

// Parse reads a cron expression and an IANA time zone name. A CRON_TZ=
// (or TZ=) prefix in expr names the zone inline; then timezone must be empty
// or the same zone. An empty zone is UTC. An expression that never fires (the
// 30th of February) is an error, because robfig/cron reports it only as a
// zero next time.
func Parse(expr, timezone string) (*Spec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, errors.New("the cron expression is empty")
	}
	if len(expr) > maxExpr {
		return nil, fmt.Errorf("the cron expression is longer than %d bytes", maxExpr)
	}
	zone := strings.TrimSpace(timezone)
	if inline, rest, ok := cutZone(expr); ok {
		if zone != "" && zone != inline {
			return nil, fmt.Errorf("the expression's CRON_TZ=%s and timezone %q disagree; set one of them", inline, zone)
		}
		zone, expr = inline, rest
	}
	loc := time.UTC
	if zone != "" {
		l, err := time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			return nil, fmt.Errorf("unknown time zone %q (use an IANA name such as Europe/Berlin or UTC)", zone)
		}
		loc = l
	}
	sched, err := parser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("cron expression %q: %v", expr, err)
	}
	s := &Spec{sched: sched, loc: loc}
	switch v := sched.(type) {
	case *cron.SpecSchedule:
		v.Location = loc
	case cron.ConstantDelaySchedule:
		s.every = v.Delay
	}
	// Feb 30 and its kind: robfig searches five years ahead and gives up
	// with a zero time. Any reference instant shows it; a fixed one keeps
	// the parse independent of the clock.
	if s.Next(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("cron expression %q never fires (no such date)", expr)
	}
	return s, nil
}

// cutZone splits a CRON_TZ=Zone or TZ=Zone prefix off expr.
func cutZone(expr string) (zone, rest string, ok bool) {
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if after, found := strings.CutPrefix(expr, p); found {
			zone, rest, _ = strings.Cut(after, " ")
			return zone, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// Location is the zone the expression's fields are read in.
func (s *Spec) Location() *time.Location { return s.loc }

// Next is the first occurrence strictly after t, in UTC; zero if there is
// none within five years. Whole seconds only: occurrences never carry
// fractions, so they make stable keys.
func (s *Spec) Next(t time.Time) time.Time {
	n := s.sched.Next(t)
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// maxSteps bounds the walk of Latest over a dense spec after a long
// downtime: a minutely spec walks about two years.
const maxSteps = 1 << 20

// Latest is the last occurrence in (after, now], or zero when there is none.
// @every is anchored on after (its first tick is after+delay), so its latest
// tick is computed rather than walked.
func (s *Spec) Latest(after, now time.Time) time.Time {
	if !now.After(after) {
		return time.Time{}
	}
	if s.every > 0 {
		first := s.Next(after)
		if first.After(now) {
			return time.Time{}
		}
		n := now.Sub(first) / s.every
		return first.Add(n * s.every)
	}
	var latest time.Time
	for i, t := 0, s.Next(after); !t.IsZero() && !t.After(now) && i < maxSteps; i, t = i+1, s.Next(t) {
		latest = t
	}
	return latest
}
