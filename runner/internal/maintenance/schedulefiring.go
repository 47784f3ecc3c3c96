package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"reasonix/internal/cronspec"
	"reasonix/runner/cron"
	"reasonix/runner/store"
)

// Schedule is a configured schedule as the firer sees it, its defaults
// applied.
type Schedule struct {
	Name        string
	Spec        *cronspec.Spec
	Overlap     string // see cron.Input
	CatchUp     string // see cron.Input
	Enabled     bool
	MaxFailures int // failures in a row that pause it
}

// ScheduleStore is the part of the store a ScheduleFirer reads and moves:
// each schedule's durable state, and the task of its last run.
type ScheduleStore interface {
	Schedule(ctx context.Context, name string) (store.ScheduleState, error)
	AdvanceSchedule(ctx context.Context, name string, anchor, occurrence time.Time, why store.Pass) (bool, error)
	SettleSchedule(ctx context.Context, name, taskID string, outcome store.State, v store.Verdict,
		maxFailures int, reason string) (settled, autoPaused bool, err error)
	Task(ctx context.Context, id string) (store.Task, error)
}

// ScheduleFirerConfig configures a ScheduleFirer; every field but
// Stopping, Now and Log is required.
type ScheduleFirerConfig struct {
	Store     ScheduleStore
	Schedules []Schedule
	// Fire submits a run of schedule name for occurrence occ in the same
	// transaction that moves its anchor from anchor to occ (the
	// service's: a run enters through the intake's validation). Another
	// node firing it first is not an error.
	Fire func(ctx context.Context, name string, anchor, occ time.Time) error
	// Passed counts an occurrence this node skipped or missed.
	Passed func(name string, a cron.Action)
	// Paused tells of a schedule that paused itself after failures runs
	// failed in a row, the last one task (the service's: an event of the
	// task, which reaches the schedule's notify targets).
	Paused func(ctx context.Context, name string, task store.Task, failures int, reason string)
	// Stopping ends a tick early when the node stops.
	Stopping func() bool
	Now      func() time.Time // nil is time.Now
	Log      *slog.Logger
}

// ScheduleFirer decides, for every configured schedule, whether an
// occurrence fires, is skipped or is missed (cron.Decide), and counts how
// the schedule's last run ended. Whether an occurrence fires is a
// compare-and-swap in the store, so two nodes ticking at once, or a
// restart, fire each occurrence once.
type ScheduleFirer struct{ cfg ScheduleFirerConfig }

// NewScheduleFirer builds a firer; a ScheduleTicker calls its Tick.
func NewScheduleFirer(cfg ScheduleFirerConfig) *ScheduleFirer {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	if cfg.Stopping == nil {
		cfg.Stopping = func() bool { return false }
	}
	return &ScheduleFirer{cfg: cfg}
}

// Tick settles finished runs and fires, skips or misses what is due, once
// for every configured schedule.
func (f *ScheduleFirer) Tick(ctx context.Context) error {
	var errs []error
	for _, sc := range f.cfg.Schedules {
		if f.cfg.Stopping() || ctx.Err() != nil {
			break
		}
		if err := f.tick(ctx, sc); err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", sc.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (f *ScheduleFirer) tick(ctx context.Context, sc Schedule) error {
	name := sc.Name
	st, err := f.cfg.Store.Schedule(ctx, name)
	if err != nil {
		return err
	}
	running, ended, err := f.settle(ctx, sc, st)
	if err != nil {
		return err
	}
	now := f.cfg.Now()
	if !sc.Enabled {
		// A disabled schedule lets its occurrences pass uncounted, so that
		// enabling it later does not fire a catch-up for the disabled time.
		if occ := sc.Spec.Latest(st.Anchor, now); !occ.IsZero() {
			_, err := f.cfg.Store.AdvanceSchedule(ctx, name, st.Anchor, occ, store.PassQuiet)
			return err
		}
		return nil
	}
	if st.Paused {
		return nil
	}
	d := cron.Decide(cron.Input{Spec: sc.Spec, Overlap: sc.Overlap, CatchUp: sc.CatchUp,
		Anchor: st.Anchor, Running: running, LastEnded: ended, Now: now})
	switch d.Action {
	case cron.Fire:
		return f.cfg.Fire(ctx, name, st.Anchor, d.Occurrence)
	case cron.Skip, cron.Miss:
		why, msg := store.PassSkipped, "runner: schedule occurrence skipped: the previous run is still going"
		if d.Action == cron.Miss {
			why, msg = store.PassMissed, "runner: schedule occurrence missed: it is late and catch_up is none"
		}
		ok, err := f.cfg.Store.AdvanceSchedule(ctx, name, st.Anchor, d.Occurrence, why)
		if ok {
			f.cfg.Passed(name, d.Action)
			f.cfg.Log.Info(msg, "schedule", name, "occurrence", d.Occurrence, "running_task", st.LastTaskID)
		}
		return err
	}
	return nil
}

// settle counts the end of the schedule's last run once (another node may
// get there first) and pauses the schedule after MaxFailures failures in a
// row. It reports whether the last run is still going and, if it ended,
// when.
func (f *ScheduleFirer) settle(ctx context.Context, sc Schedule, st store.ScheduleState) (running bool, ended time.Time, err error) {
	if st.LastTaskID == "" {
		return false, time.Time{}, nil
	}
	task, err := f.cfg.Store.Task(ctx, st.LastTaskID)
	if errors.Is(err, store.ErrNotFound) {
		return false, time.Time{}, nil
	}
	if err != nil {
		return false, time.Time{}, err
	}
	if !task.State.Terminal() {
		return true, time.Time{}, nil
	}
	if st.Settled {
		return false, task.FinishedAt, nil
	}
	name, limit := sc.Name, sc.MaxFailures
	reason := fmt.Sprintf("paused after %d failed runs in a row (the last: task %s, %s)", limit, task.ID, task.State)
	_, paused, err := f.cfg.Store.SettleSchedule(ctx, name, task.ID, task.State, verdict(task.State), limit, reason)
	if err != nil {
		return false, task.FinishedAt, err
	}
	if paused {
		// Announced once, by the node whose settle paused it.
		f.cfg.Log.Warn("runner: schedule paused", "schedule", name, "failures", limit, "task", task.ID, "state", task.State)
		f.cfg.Paused(ctx, name, task, limit, reason)
	}
	return false, task.FinishedAt, nil
}

// verdict is how a run's end counts towards max_failures: cancelling or
// interrupting a run is a person's or the host's doing, not the
// schedule's.
func verdict(st store.State) store.Verdict {
	switch st {
	case store.StateSucceeded:
		return store.VerdictSuccess
	case store.StateFailed, store.StateBlocked, store.StateBudgetExhausted:
		return store.VerdictFailure
	}
	return store.VerdictNeutral
}
