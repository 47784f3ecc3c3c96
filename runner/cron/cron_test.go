package cron

import (
	"testing"
	"time"

	"reasonix/config"
	"reasonix/internal/cronspec"
)

func TestDecide(t *testing.T) {
	every, _ := cronspec.Parse("@every 1s", "")
	hourly, _ := cronspec.Parse("0 * * * *", "")
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		in   Input
		want Decision
	}{
		{"nothing due", Input{Spec: hourly, Anchor: t0, Now: t0.Add(59 * time.Minute)}, Decision{}},
		{"every second fires", Input{Spec: every, Anchor: t0, Now: t0.Add(time.Second)}, Decision{Fire, t0.Add(time.Second)}},
		{"six-hour gap: one catch-up, the latest", Input{Spec: hourly, CatchUp: config.CatchUpLatest, Anchor: t0, Now: t0.Add(6*time.Hour + 5*time.Minute)},
			Decision{Fire, t0.Add(6 * time.Hour)}},
		{"six-hour gap, catch_up none: missed", Input{Spec: hourly, CatchUp: config.CatchUpNone, Anchor: t0, Now: t0.Add(6*time.Hour + 5*time.Minute)},
			Decision{Miss, t0.Add(6 * time.Hour)}},
		{"catch_up none within the grace", Input{Spec: hourly, CatchUp: config.CatchUpNone, Anchor: t0, Now: t0.Add(time.Hour + 30*time.Second)},
			Decision{Fire, t0.Add(time.Hour)}},
		{"overlap skip", Input{Spec: hourly, Overlap: config.OverlapSkip, Running: true, Anchor: t0, Now: t0.Add(time.Hour)},
			Decision{Skip, t0.Add(time.Hour)}},
		{"overlap queue waits", Input{Spec: hourly, Overlap: config.OverlapQueue, Running: true, Anchor: t0, Now: t0.Add(time.Hour)}, Decision{}},
		{"overlap queue fires late after the run ends, catch_up none or not",
			Input{Spec: hourly, Overlap: config.OverlapQueue, CatchUp: config.CatchUpNone, LastEnded: t0.Add(90 * time.Minute), Anchor: t0, Now: t0.Add(91 * time.Minute)},
			Decision{Fire, t0.Add(time.Hour)}},
	} {
		if got := Decide(c.in); got != c.want {
			t.Errorf("%s: %v at %v, want %v at %v", c.name, got.Action, got.Occurrence, c.want.Action, c.want.Occurrence)
		}
	}
}

func TestKey(t *testing.T) {
	ber, _ := time.LoadLocation("Europe/Berlin")
	// The two 02:30s of the fall-back day are different occurrences.
	a := Key("n", time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC).In(ber))
	b := Key("n", time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC).In(ber))
	if a != "schedule:n:2026-10-25T00:30:00Z" || a == b {
		t.Errorf("keys %q %q", a, b)
	}
}
