// Package cron decides what a schedule does at one tick of the runner's
// schedule loop: fire its latest due occurrence, record it as skipped or
// missed, or wait. It holds no timers and no state: the runner reads the
// schedule's durable state, asks Decide, and carries the decision out as a
// compare-and-swap in the store, so a decision taken by two nodes at once
// still happens once.
package cron

import (
	"time"

	"reasonix/config"
	"reasonix/internal/cronspec"
)

// Grace is how late an occurrence may fire under catch_up = "none": later
// than that it counts as missed. It covers the loop's own delay (a tick
// every second or so, a busy database) but not downtime.
const Grace = time.Minute

// Action is what a schedule does now.
type Action int

// The actions.
const (
	Wait Action = iota // nothing is due, or an overlap = "queue" tick waits for the running one
	Fire               // start a run for Decision.Occurrence
	Skip               // the previous run is still going: record the occurrence as skipped
	Miss               // the occurrence is too late for catch_up = "none": record it as missed
)

func (a Action) String() string {
	switch a {
	case Fire:
		return "fire"
	case Skip:
		return "skip"
	case Miss:
		return "miss"
	}
	return "wait"
}

// Input is what Decide looks at.
type Input struct {
	Spec    *cronspec.Spec
	Overlap string // config.OverlapSkip (default) or config.OverlapQueue
	CatchUp string // config.CatchUpLatest (default) or config.CatchUpNone
	// Anchor is the last occurrence handled; only later ones are due.
	Anchor time.Time
	// Running is true while the schedule's last run has not ended.
	Running bool
	// LastEnded is when the last run ended; zero when unknown or running.
	LastEnded time.Time
	Now       time.Time
}

// Decision is Decide's answer. Occurrence is zero for Wait.
type Decision struct {
	Action     Action
	Occurrence time.Time
}

// Decide looks at the latest occurrence in (Anchor, Now]; earlier ones in
// that interval are folded into it, so downtime costs at most one catch-up
// run. Pause and enable are the caller's business.
func Decide(in Input) Decision {
	occ := in.Spec.Latest(in.Anchor, in.Now)
	if occ.IsZero() {
		return Decision{Action: Wait}
	}
	queue := in.Overlap == config.OverlapQueue
	if in.Running {
		if queue {
			return Decision{Action: Wait}
		}
		return Decision{Action: Skip, Occurrence: occ}
	}
	// An occurrence held back by overlap = "queue" is late on purpose: it
	// fires when the run it waited for ends, catch_up or not.
	heldBack := queue && in.LastEnded.After(occ)
	if in.CatchUp == config.CatchUpNone && in.Now.Sub(occ) > Grace && !heldBack {
		return Decision{Action: Miss, Occurrence: occ}
	}
	return Decision{Action: Fire, Occurrence: occ}
}

// Key is the dedupe key of an occurrence of schedule name: one task per
// key, whatever fires it.
func Key(name string, occurrence time.Time) string {
	return "schedule:" + name + ":" + occurrence.UTC().Format(time.RFC3339)
}

// Requester is the principal id of schedule name's runs.
func Requester(name string) string { return "schedule:" + name }
