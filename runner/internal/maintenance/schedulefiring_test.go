package maintenance

import (
	"context"
	"testing"
	"time"

	"reasonix/internal/cronspec"
	"reasonix/runner/cron"
	"reasonix/runner/store"
)

// fakeSchedules is a ScheduleStore over maps, recording the moves.
type fakeSchedules struct {
	states   map[string]store.ScheduleState
	tasks    map[string]store.Task
	advanced map[string]store.Pass
	settled  map[string]store.Verdict
}

func (f *fakeSchedules) Schedule(_ context.Context, name string) (store.ScheduleState, error) {
	return f.states[name], nil
}

func (f *fakeSchedules) AdvanceSchedule(_ context.Context, name string, _, _ time.Time, why store.Pass) (bool, error) {
	f.advanced[name] = why
	return true, nil
}

func (f *fakeSchedules) SettleSchedule(_ context.Context, name, _ string, _ store.State, v store.Verdict, limit int, _ string) (bool, bool, error) {
	f.settled[name] = v
	return true, v == store.VerdictFailure && limit == 1, nil
}

func (f *fakeSchedules) Task(_ context.Context, id string) (store.Task, error) {
	if t, ok := f.tasks[id]; ok {
		return t, nil
	}
	return store.Task{}, store.ErrNotFound
}

// TestScheduleFirerDecidesEachSchedule: with an occurrence due, a schedule
// whose last run still goes is skipped and counted, a disabled one passes
// quietly without firing, and one whose last run failed is settled as a
// failure, paused (max_failures 1, announced once) and fired — the store's
// compare-and-swap, not the firer, refuses a paused schedule's run.
func TestScheduleFirerDecidesEachSchedule(t *testing.T) {
	spec, err := cronspec.Parse("*/5 * * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC)
	anchor := now.Add(-10 * time.Minute)
	st := &fakeSchedules{
		states: map[string]store.ScheduleState{
			"busy":    {Name: "busy", Anchor: anchor, LastTaskID: "t-busy"},
			"off":     {Name: "off", Anchor: anchor},
			"failing": {Name: "failing", Anchor: anchor, LastTaskID: "t-failed"},
		},
		tasks: map[string]store.Task{
			"t-busy":   {ID: "t-busy", State: store.StateRunning},
			"t-failed": {ID: "t-failed", State: store.StateFailed, FinishedAt: now.Add(-time.Minute)},
		},
		advanced: map[string]store.Pass{}, settled: map[string]store.Verdict{},
	}
	var fired, passed, paused []string
	f := NewScheduleFirer(ScheduleFirerConfig{Store: st, Now: func() time.Time { return now },
		Schedules: []Schedule{
			{Name: "busy", Spec: spec, Enabled: true, MaxFailures: 3},
			{Name: "off", Spec: spec, Enabled: false, MaxFailures: 3},
			{Name: "failing", Spec: spec, Enabled: true, MaxFailures: 1},
		},
		Fire: func(_ context.Context, name string, a, occ time.Time) error {
			if !a.Equal(anchor) || !occ.Equal(time.Date(2026, 1, 1, 10, 5, 0, 0, time.UTC)) {
				t.Errorf("fired %s from %s for %s", name, a, occ)
			}
			fired = append(fired, name)
			return nil
		},
		Passed: func(name string, a cron.Action) { passed = append(passed, name+":"+a.String()) },
		Paused: func(_ context.Context, name string, task store.Task, failures int, _ string) {
			paused = append(paused, name+":"+task.ID)
		},
	})
	if err := f.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(fired) != 1 || fired[0] != "failing" {
		t.Errorf("fired %v, want [failing]", fired)
	}
	if len(passed) != 1 || passed[0] != "busy:skip" || st.advanced["busy"] != store.PassSkipped {
		t.Errorf("passed %v (busy advanced %v), want busy skipped", passed, st.advanced["busy"])
	}
	if why, ok := st.advanced["off"]; !ok || why != store.PassQuiet {
		t.Errorf("the disabled schedule advanced %v (%v), want quietly", why, ok)
	}
	if st.settled["failing"] != store.VerdictFailure || len(paused) != 1 || paused[0] != "failing:t-failed" {
		t.Errorf("settled %v, paused %v", st.settled, paused)
	}
	if _, ok := st.settled["busy"]; ok {
		t.Error("a run still going was settled")
	}
}

// TestScheduleFirerStopsWhenTheNodeStops: a stopping node fires nothing.
func TestScheduleFirerStopsWhenTheNodeStops(t *testing.T) {
	spec, err := cronspec.Parse("* * * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC)
	st := &fakeSchedules{states: map[string]store.ScheduleState{"a": {Name: "a", Anchor: now.Add(-time.Hour)}},
		advanced: map[string]store.Pass{}, settled: map[string]store.Verdict{}}
	fired := 0
	f := NewScheduleFirer(ScheduleFirerConfig{Store: st, Now: func() time.Time { return now },
		Schedules: []Schedule{{Name: "a", Spec: spec, Enabled: true, MaxFailures: 3}},
		Fire:      func(context.Context, string, time.Time, time.Time) error { fired++; return nil },
		Stopping:  func() bool { return true },
	})
	if err := f.Tick(t.Context()); err != nil || fired != 0 {
		t.Fatalf("a stopping node fired %d times (%v)", fired, err)
	}
}
