package apitype

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Durations splits a task's life by where it was: waiting for a worker
// (Queued), being worked on (Running), waiting for a person to decide
// an approval (Waiting) and waiting for its pull request's CI (CI). The CLI, the dashboard and chat read them the same
// way, from the task's task_state events (see SplitDurations), so one task
// shows the same numbers everywhere. Time a task spent ended (blocked,
// interrupted, …) before someone continued it counts in none of them.
type Durations struct {
	Queued  time.Duration
	Running time.Duration
	Waiting time.Duration
	CI      time.Duration
}

// durationsWire is Durations on the wire: whole milliseconds, each part
// named with its unit, like the result's duration_ms.
type durationsWire struct {
	QueuedMS  int64 `json:"queued_ms"`
	RunningMS int64 `json:"running_ms"`
	WaitingMS int64 `json:"waiting_ms"`
	CIMS      int64 `json:"ci_ms"`
}

// MarshalJSON writes {"queued_ms", "running_ms", "waiting_ms", "ci_ms"}.
func (d Durations) MarshalJSON() ([]byte, error) {
	return json.Marshal(durationsWire{d.Queued.Milliseconds(), d.Running.Milliseconds(), d.Waiting.Milliseconds(),
		d.CI.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Durations) UnmarshalJSON(b []byte) error {
	var w durationsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = Durations{Queued: time.Duration(w.QueuedMS) * time.Millisecond,
		Running: time.Duration(w.RunningMS) * time.Millisecond, Waiting: time.Duration(w.WaitingMS) * time.Millisecond,
		CI: time.Duration(w.CIMS) * time.Millisecond}
	return nil
}

// StateChange is one task_state event: the task entered State at At.
type StateChange struct {
	State TaskState
	At    time.Time
}

// StateChanges reads the task_state events among evs, in their order; an
// event whose payload names no state is skipped.
func StateChanges(evs []Event) []StateChange {
	var out []StateChange
	for _, e := range evs {
		if s, ok := StateOf(e.Type, e.Payload); ok {
			out = append(out, StateChange{State: s, At: e.Time})
		}
	}
	return out
}

// StateOf reads the state a task_state event of type typ announces.
func StateOf(typ string, payload json.RawMessage) (TaskState, bool) {
	if typ != EventTaskState {
		return "", false
	}
	var p TaskStatePayload
	if json.Unmarshal(payload, &p) != nil || p.State == "" {
		return "", false
	}
	return p.State, true
}

// SplitDurations adds up the time between a task's state changes. The
// task is queued from created until its first change; the last live state
// (queued, running, waiting_approval or waiting_ci) lasts until now. Changes out of
// time order (clocks of two nodes) count as zero, never negative.
func SplitDurations(created time.Time, changes []StateChange, now time.Time) Durations {
	var d Durations
	state, since := StateQueued, created
	add := func(until time.Time) {
		span := until.Sub(since)
		if span <= 0 {
			return
		}
		switch state {
		case StateQueued:
			d.Queued += span
		case StateRunning:
			d.Running += span
		case StateWaitingApproval:
			d.Waiting += span
		case StateWaitingCI:
			d.CI += span
		}
	}
	for _, c := range changes {
		add(c.At)
		state, since = c.State, maxTime(since, c.At)
	}
	if !state.Terminal() {
		add(now)
	}
	return d
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// String labels each part that is not zero: "ran 3m12s · waited 25m for
// approval · queued 2s"; "not started" when all are zero.
func (d Durations) String() string {
	var parts []string
	if d.Running > 0 {
		parts = append(parts, "ran "+Short(d.Running))
	}
	if d.Waiting > 0 {
		parts = append(parts, "waited "+Short(d.Waiting)+" for approval")
	}
	if d.CI > 0 {
		parts = append(parts, "waited "+Short(d.CI)+" for CI")
	}
	if d.Queued > 0 {
		parts = append(parts, "queued "+Short(d.Queued))
	}
	if len(parts) == 0 {
		return "not started"
	}
	return strings.Join(parts, " · ")
}

// Short is a duration to the second, in at most two units: 850ms, 45s,
// 3m12s, 2h05m, 3d4h.
func Short(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}
