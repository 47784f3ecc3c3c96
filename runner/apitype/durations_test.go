package apitype_test

import (
	"encoding/json"
	"testing"
	"time"

	"reasonix/runner/apitype"
)

// TestSplitDurations: a task queued 2s, run 10s, waiting 25m for a
// person, queued 1s, run 5s and ended reads as ran 15s, waited 25m,
// queued 3s; a live task counts up to now; out-of-order clocks never go
// negative.
func TestSplitDurations(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ev := func(seq int64, state string, d time.Duration) apitype.Event {
		p, _ := json.Marshal(map[string]string{"state": state})
		return apitype.Event{Seq: seq, Type: apitype.EventTaskState, Payload: p, Time: at(d)}
	}
	evs := []apitype.Event{
		ev(1, "running", 2*time.Second),
		{Seq: 2, Type: "tool_started", Payload: json.RawMessage(`{"state":"bogus"}`), Time: at(3 * time.Second)},
		ev(3, "waiting_approval", 12*time.Second),
		ev(4, "queued", 12*time.Second+25*time.Minute),
		ev(5, "running", 13*time.Second+25*time.Minute),
		ev(6, "succeeded", 18*time.Second+25*time.Minute),
	}
	got := apitype.SplitDurations(t0, apitype.StateChanges(evs), at(time.Hour))
	want := apitype.Durations{Queued: 3 * time.Second, Running: 15 * time.Second, Waiting: 25 * time.Minute}
	if got != want {
		t.Fatalf("ended task: %+v, want %+v", got, want)
	}
	if s := got.String(); s != "ran 15s · waited 25m00s for approval · queued 3s" {
		t.Errorf("String() = %q", s)
	}
	live := apitype.SplitDurations(t0, apitype.StateChanges(evs[:3]), at(time.Minute))
	if live.Waiting != 48*time.Second || live.Running != 10*time.Second {
		t.Errorf("a task waiting now: %+v", live)
	}
	skew := apitype.SplitDurations(t0, []apitype.StateChange{{State: "running", At: at(-time.Minute)}, {State: "failed", At: at(-2 * time.Minute)}}, at(time.Hour))
	if skew.Queued < 0 || skew.Running < 0 || skew != (apitype.Durations{}) {
		t.Errorf("out-of-order changes: %+v", skew)
	}
	// A published task waiting for its pull request's CI waits for CI, not
	// for a person; the split says which, on the wire too.
	ci := apitype.SplitDurations(t0, []apitype.StateChange{{State: "running", At: at(0)},
		{State: "waiting_ci", At: at(time.Minute)}, {State: "succeeded", At: at(9 * time.Minute)}}, at(time.Hour))
	if ci.CI != 8*time.Minute || ci.Waiting != 0 || ci.String() != "ran 1m00s · waited 8m00s for CI" {
		t.Errorf("a task that waited for CI: %+v %q", ci, ci.String())
	}
	var back apitype.Durations
	if b, err := json.Marshal(ci); err != nil || json.Unmarshal(b, &back) != nil || back != ci ||
		string(b) != `{"queued_ms":0,"running_ms":60000,"waiting_ms":0,"ci_ms":480000}` {
		t.Errorf("on the wire: %s → %+v (%v)", b, back, err)
	}
	if s := (apitype.Durations{}).String(); s != "not started" {
		t.Errorf("zero = %q", s)
	}
	for d, want := range map[time.Duration]string{0: "0s", 850 * time.Millisecond: "850ms", 45 * time.Second: "45s",
		192 * time.Second: "3m12s", 125 * time.Minute: "2h05m", 76 * time.Hour: "3d4h"} {
		if got := apitype.Short(d); got != want {
			t.Errorf("Short(%s) = %q, want %q", d, got, want)
		}
	}
}
