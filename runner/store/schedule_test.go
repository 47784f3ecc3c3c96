package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func scheduleFire(anchor, occ time.Time) store.Fire {
	return store.Fire{
		Name: "nightly", Anchor: anchor, Occurrence: occ, RunAt: occ,
		Task:      store.NewTask{Source: store.SourceCron, Requester: "schedule:nightly", Prompt: "update deps"},
		DedupeKey: "schedule:nightly:" + occ.Format(time.RFC3339),
	}
}

// testScheduleFireOnce: many callers fire the same occurrence at once (as
// several nodes would); exactly one creates a task, and the anchor moved.
func testScheduleFireOnce(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	anchor := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	if _, err := s.EnsureSchedule(ctx, "nightly", anchor); err != nil {
		t.Fatal(err)
	}
	occ := anchor.Add(time.Hour)
	const n = 8
	var mu sync.Mutex
	var wg sync.WaitGroup
	var fired []string
	for range n {
		wg.Go(func() {
			task, ok, err := s.FireSchedule(ctx, scheduleFire(anchor, occ))
			if err != nil {
				t.Errorf("FireSchedule: %v", err)
				return
			}
			if ok {
				mu.Lock()
				fired = append(fired, task.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(fired) != 1 {
		t.Fatalf("%d concurrent fires of one occurrence fired %d times, want 1", n, len(fired))
	}
	if c := count(t, s, "SELECT COUNT(*) FROM tasks"); c != 1 {
		t.Errorf("tasks = %d, want 1", c)
	}
	st, err := s.Schedule(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Anchor.Equal(occ) || st.LastTaskID != fired[0] || !st.LastRunAt.Equal(occ) || st.Settled {
		t.Errorf("state after the fire = %+v", st)
	}
	// An occurrence whose task exists already moves the anchor but is no
	// new fire.
	replay := scheduleFire(occ, occ.Add(time.Minute))
	replay.DedupeKey = scheduleFire(anchor, occ).DedupeKey
	if _, ok, err := s.FireSchedule(ctx, replay); ok || err != nil {
		t.Errorf("a replayed occurrence key: fired %v, err %v", ok, err)
	}
	if st, _ := s.Schedule(ctx, "nightly"); !st.Anchor.Equal(occ.Add(time.Minute)) || st.LastTaskID != fired[0] {
		t.Errorf("after a replayed key: %+v", st)
	}
	occ = occ.Add(time.Minute)
	// A stale caller (old anchor) and a paused schedule fire nothing.
	if _, ok, err := s.FireSchedule(ctx, scheduleFire(anchor, occ.Add(time.Hour))); ok || err != nil {
		t.Errorf("a fire with a stale anchor: fired %v, err %v", ok, err)
	}
	if _, err := s.PauseSchedule(ctx, "nightly", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.FireSchedule(ctx, scheduleFire(occ, occ.Add(time.Hour))); ok || err != nil {
		t.Errorf("a fire while paused: fired %v, err %v", ok, err)
	}
	if c := count(t, s, "SELECT COUNT(*) FROM tasks"); c != 1 {
		t.Errorf("tasks = %d after refused fires, want 1 (nothing written)", c)
	}
	// A manual run ignores the pause and the anchor.
	f := scheduleFire(time.Time{}, time.Time{})
	f.Manual, f.RunAt, f.DedupeKey = true, occ.Add(10*time.Minute), "schedule:nightly:manual:1"
	task, ok, err := s.FireSchedule(ctx, f)
	if err != nil || !ok {
		t.Fatalf("manual fire: %v %v", ok, err)
	}
	if st, _ := s.Schedule(ctx, "nightly"); st.LastTaskID != task.ID || !st.Anchor.Equal(occ) {
		t.Errorf("after a manual run: %+v", st)
	}
	f.Name = "nope"
	if _, _, err := s.FireSchedule(ctx, f); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("manual fire of an unknown schedule: %v, want ErrNotFound", err)
	}
}

func testScheduleStateChanges(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	anchor := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	st, err := s.EnsureSchedule(ctx, "nightly", anchor)
	if err != nil || !st.Anchor.Equal(anchor) || st.Paused || !st.Settled {
		t.Fatalf("new schedule: %+v, %v", st, err)
	}
	// Ensure keeps existing state.
	if _, err := s.PauseSchedule(ctx, "nightly", "by hand"); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.EnsureSchedule(ctx, "nightly", anchor.Add(time.Hour)); !st.Paused || !st.Anchor.Equal(anchor) || st.PausedReason != "by hand" {
		t.Errorf("Ensure changed existing state: %+v", st)
	}
	resumeAt := anchor.Add(5 * time.Hour)
	if st, err = s.ResumeSchedule(ctx, "nightly", resumeAt); err != nil || st.Paused || !st.Anchor.Equal(resumeAt) {
		t.Errorf("resume: %+v, %v", st, err)
	}
	if _, err := s.PauseSchedule(ctx, "missing", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pause of an unknown schedule: %v", err)
	}

	// Skips and misses move the anchor once.
	occ := resumeAt.Add(time.Hour)
	for i, want := range []bool{true, false} {
		ok, err := s.AdvanceSchedule(ctx, "nightly", resumeAt, occ, store.PassSkipped)
		if err != nil || ok != want {
			t.Errorf("advance %d: %v %v, want %v", i, ok, err, want)
		}
	}
	if ok, _ := s.AdvanceSchedule(ctx, "nightly", occ, occ.Add(time.Hour), store.PassMissed); !ok {
		t.Error("a miss did not advance")
	}
	if st, _ = s.Schedule(ctx, "nightly"); st.Skipped != 1 || st.Missed != 1 || !st.LastSkippedAt.Equal(occ) || !st.LastMissedAt.Equal(occ.Add(time.Hour)) {
		t.Errorf("after a skip and a miss: %+v", st)
	}

	// Three failures in a row pause it; a success in between resets.
	anchor = st.Anchor
	run := func(v store.Verdict, outcome store.State) (bool, bool) {
		t.Helper()
		next := anchor.Add(time.Hour)
		task, ok, err := s.FireSchedule(ctx, scheduleFire(anchor, next))
		if err != nil || !ok {
			t.Fatalf("fire: %v %v", ok, err)
		}
		anchor = next
		settled, paused, err := s.SettleSchedule(ctx, "nightly", task.ID, outcome, v, 3, "failed 3 times")
		if err != nil {
			t.Fatal(err)
		}
		if again, _, _ := s.SettleSchedule(ctx, "nightly", task.ID, outcome, v, 3, "x"); again {
			t.Error("a run was settled twice")
		}
		return settled, paused
	}
	run(store.VerdictFailure, store.StateFailed)
	run(store.VerdictFailure, store.StateFailed)
	if st, _ = s.Schedule(ctx, "nightly"); !st.LastSuccessAt.IsZero() {
		t.Errorf("a last success before any: %v", st.LastSuccessAt)
	}
	run(store.VerdictSuccess, store.StateSucceeded)
	st, _ = s.Schedule(ctx, "nightly")
	success := st.LastSuccessAt
	if success.IsZero() {
		t.Error("a success left no last success time")
	}
	run(store.VerdictFailure, store.StateFailed)
	run(store.VerdictNeutral, store.StateCancelled)
	run(store.VerdictFailure, store.StateBlocked)
	if _, paused := run(store.VerdictFailure, store.StateFailed); !paused {
		t.Fatal("the third failure in a row did not pause")
	}
	st, _ = s.Schedule(ctx, "nightly")
	if !st.Paused || st.PausedReason != "failed 3 times" || st.Failures != 3 || st.LastOutcome != store.StateFailed {
		t.Errorf("after auto-pause: %+v", st)
	}
	if !st.LastSuccessAt.Equal(success) {
		t.Errorf("failures moved the last success from %v to %v", success, st.LastSuccessAt)
	}
	if st, _ = s.ResumeSchedule(ctx, "nightly", anchor); st.Failures != 0 || st.Paused {
		t.Errorf("resume did not clear the failures: %+v", st)
	}
	if all, err := s.Schedules(ctx); err != nil || len(all) != 1 || all[0].Name != "nightly" {
		t.Errorf("Schedules = %+v, %v", all, err)
	}
}
