package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"reasonix/policy"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// Schedule is a [[schedules]] entry with what it has done, as listed by
// the API and the CLI.
type Schedule struct {
	Name     string
	Cron     string
	Timezone string // the zone the expression is read in
	Enabled  bool
	Paused   bool
	// PausedReason says why it was paused automatically; "" when a person
	// paused it.
	PausedReason string
	// Next is the next occurrence; zero while paused or disabled.
	Next time.Time
	// LastRunAt is the occurrence of the last run (a manual run's start);
	// zero before the first.
	LastRunAt  time.Time
	LastTaskID string
	// LastOutcome is the last run's end state, "running" while it has not
	// ended, "" before the first run.
	LastOutcome   string
	Failures      int // failed runs in a row
	MaxFailures   int
	Skipped       int64
	LastSkippedAt time.Time
	Missed        int64
	LastMissedAt  time.Time // the last occurrence dropped for being late
	Overlap       string
	CatchUp       string
	Posture       policy.Posture
	// LastSuccessAt is when a run last ended well; zero before the first.
	LastSuccessAt time.Time
	// Health says in a word whether the schedule does its job (see
	// Health*), and HealthReason why not, in a sentence ("" when ok).
	Health       string
	HealthReason string
}

// A schedule's health, worst first: one that will not run, then one that
// runs and fails, one that should have run and did not, and one whose
// runs end well (or that has not been due yet).
const (
	HealthDisabled = "disabled"
	HealthPaused   = "paused"
	HealthFailing  = "failing"
	HealthLate     = "late"
	HealthOK       = "ok"
)

// lateAfter is how long past its time an occurrence may go unfired before
// its schedule is late: far beyond a tick (a second) and a leader's
// hand-over, so a late schedule means no node is firing it.
const lateAfter = 2 * time.Minute

// MayManageSchedules reports whether p may run, pause or resume schedules:
// admins only, because a schedule runs with the posture its configuration
// gives it, which may be above p's own limit.
func (p Principal) MayManageSchedules() error {
	if p.Role != store.RoleAdmin {
		return failf(ErrForbidden, "%s may not run, pause or resume schedules (role %s); an admin token is needed", p.ID, p.Role)
	}
	return nil
}

// Schedules lists the configured schedules with their state, in
// configuration order.
func (s *Service) Schedules(ctx context.Context) ([]Schedule, error) {
	// Two reads for the whole list, whatever its length: the relay judges
	// every schedule's health on each scan.
	all, err := s.st.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	states := make(map[string]*store.ScheduleState, len(all))
	var unsettled []string
	for i := range all {
		states[all[i].Name] = &all[i]
		if all[i].LastTaskID != "" && !all[i].Settled {
			unsettled = append(unsettled, all[i].LastTaskID)
		}
	}
	ended, err := s.st.TaskStates(ctx, unsettled)
	if err != nil {
		return nil, err
	}
	out := make([]Schedule, 0, len(s.sched.list))
	for _, sc := range s.sched.list {
		st := states[sc.cfg.Name]
		if st == nil {
			// Not started yet on this database: it would be anchored now.
			st = &store.ScheduleState{Name: sc.cfg.Name, Anchor: s.now(), Settled: true}
		}
		out = append(out, s.scheduleView(sc, *st, ended[st.LastTaskID]))
	}
	return out, nil
}

// ScheduleByName is one configured schedule with its state; an unknown
// name is an *Error of kind ErrNotFound.
func (s *Service) ScheduleByName(ctx context.Context, name string) (Schedule, error) {
	sc, err := s.knownSchedule(name)
	if err != nil {
		return Schedule{}, err
	}
	st, err := s.st.Schedule(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		// Not started yet on this database: it would be anchored now.
		st = store.ScheduleState{Name: name, Anchor: s.now(), Settled: true}
	} else if err != nil {
		return Schedule{}, err
	}
	return s.scheduleOne(ctx, sc, st), nil
}

// RunSchedule starts a run of schedule name now, on behalf of by (an
// admin), whatever its cron expression says; a paused or disabled schedule
// runs too, and a run still going is not waited for. The run counts
// towards max_failures like any other.
func (s *Service) RunSchedule(ctx context.Context, by Principal, name string) (store.Task, error) {
	if err := by.MayManageSchedules(); err != nil {
		return store.Task{}, err
	}
	sc, err := s.knownSchedule(name)
	if err != nil {
		return store.Task{}, err
	}
	if _, err := s.st.EnsureSchedule(ctx, name, s.now()); err != nil {
		return store.Task{}, err
	}
	task, _, err := s.fireSchedule(ctx, sc, time.Time{}, time.Time{}, true)
	if err == nil {
		s.log.Info("runner: schedule run by hand", "schedule", name, "by", by.ID, "task", task.ID)
	}
	return task, err
}

// PauseSchedule stops schedule name from firing until ResumeSchedule; the
// pause is stored, so it holds across restarts and on every node.
func (s *Service) PauseSchedule(ctx context.Context, by Principal, name string) (Schedule, error) {
	return s.changeSchedule(ctx, by, name, func() (store.ScheduleState, error) {
		return s.st.PauseSchedule(ctx, name, "")
	})
}

// ResumeSchedule lets schedule name fire again from now on: occurrences
// that passed while it was paused are not caught up, and its failure count
// starts again at zero.
func (s *Service) ResumeSchedule(ctx context.Context, by Principal, name string) (Schedule, error) {
	return s.changeSchedule(ctx, by, name, func() (store.ScheduleState, error) {
		return s.st.ResumeSchedule(ctx, name, s.now())
	})
}

func (s *Service) changeSchedule(ctx context.Context, by Principal, name string, change func() (store.ScheduleState, error)) (Schedule, error) {
	if err := by.MayManageSchedules(); err != nil {
		return Schedule{}, err
	}
	sc, err := s.knownSchedule(name)
	if err != nil {
		return Schedule{}, err
	}
	if _, err := s.st.EnsureSchedule(ctx, name, s.now()); err != nil {
		return Schedule{}, err
	}
	st, err := change()
	if err != nil {
		return Schedule{}, mapStoreErr(err, "schedule "+name)
	}
	s.log.Info("runner: schedule changed", "schedule", name, "paused", st.Paused, "by", by.ID)
	return s.scheduleOne(ctx, sc, st), nil
}

// scheduleOne is scheduleView of one schedule, with its last run's state
// read when the loop has not counted that run yet. A task that cannot be
// read shows as still running.
func (s *Service) scheduleOne(ctx context.Context, sc *scheduled, st store.ScheduleState) Schedule {
	var last store.State
	if st.LastTaskID != "" && !st.Settled {
		if t, err := s.st.Task(ctx, st.LastTaskID); err == nil {
			last = t.State
		}
	}
	return s.scheduleView(sc, st, last)
}

func (s *Service) knownSchedule(name string) (*scheduled, error) {
	if sc := s.scheduleNamed(name); sc != nil {
		return sc, nil
	}
	return nil, failf(ErrNotFound, "schedule %q is not configured", name)
}

func (s *Service) scheduleView(sc *scheduled, st store.ScheduleState, last store.State) Schedule {
	c := sc.cfg
	v := Schedule{Name: c.Name, Cron: c.Cron, Timezone: sc.spec.Location().String(), Enabled: c.IsEnabled(),
		MaxFailures: c.MaxFailures, Overlap: c.Overlap, CatchUp: c.CatchUp, Posture: c.Posture}
	v.Paused, v.PausedReason, v.Failures = st.Paused, st.PausedReason, st.Failures
	v.LastRunAt, v.LastTaskID, v.LastOutcome = st.LastRunAt, st.LastTaskID, string(st.LastOutcome)
	v.Skipped, v.LastSkippedAt, v.Missed = st.Skipped, st.LastSkippedAt, st.Missed
	v.LastSuccessAt, v.LastMissedAt = st.LastSuccessAt, st.LastMissedAt
	if st.LastTaskID != "" && !st.Settled {
		v.LastOutcome = "running"
		if last.Terminal() {
			v.LastOutcome = string(last) // ended, not yet counted by the loop
		}
	}
	if v.Enabled && !v.Paused {
		// The next occurrence after the anchor; one already due shows as
		// due now.
		v.Next = sc.spec.Next(st.Anchor)
		if now := s.now(); v.Next.Before(now) {
			if latest := sc.spec.Latest(st.Anchor, now); !latest.IsZero() {
				v.Next = latest
			}
		}
	}
	v.Health, v.HealthReason = v.health(s.now())
	return v
}

// health judges v at now.
func (v Schedule) health(now time.Time) (string, string) {
	switch {
	case !v.Enabled:
		return HealthDisabled, "it is disabled in the configuration"
	case v.Paused && v.PausedReason != "":
		return HealthPaused, "it " + v.PausedReason
	case v.Paused:
		return HealthPaused, "a person paused it"
	case v.Failures > 0:
		return HealthFailing, fmt.Sprintf("its last %d run(s) failed, the last one %s; it pauses itself after %d",
			v.Failures, v.LastOutcome, v.MaxFailures)
	case !v.Next.IsZero() && now.Sub(v.Next) > lateAfter:
		return HealthLate, fmt.Sprintf("its run due %s ago has not started: no node is firing it", apitype.Short(now.Sub(v.Next)))
	}
	return HealthOK, ""
}
