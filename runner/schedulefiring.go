package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reasonix/config"
	"reasonix/internal/cronspec"
	"reasonix/policy"
	"reasonix/runner/cron"
	"reasonix/runner/store"
)

// scheduled is a configured schedule with its parsed expression.
type scheduled struct {
	cfg  config.Schedule
	spec *cronspec.Spec
}

// scheduleSet is the service's configured schedules and their metric.
type scheduleSet struct {
	list []*scheduled
	// occurrences counts what this node did with occurrences, by schedule
	// and outcome (fire, skip, miss, manual); the schedule label is
	// bounded by the configuration.
	occurrences *prometheus.CounterVec
}

// loadSchedules parses the configured schedules and checks each run they
// would submit with the intake's own validation, so a schedule whose
// prompt the intake would refuse stops New rather than failing every tick.
func (s *Service) loadSchedules() (scheduleSet, error) {
	list, err := parseSchedules(s.set)
	if err != nil {
		return scheduleSet{}, err
	}
	for _, sc := range list {
		req := s.scheduleRequest(sc, cron.Key(sc.cfg.Name, time.Time{}))
		if req.Command != "" && req.Prompt == "" {
			// The command is read from the repository when the schedule
			// fires; its name stands in for the prompt here.
			req.Prompt = "/" + req.Command
		}
		if err := req.validate(s); err != nil {
			var re *Error
			if errors.As(err, &re) {
				err = errors.New(re.Message)
			}
			return scheduleSet{}, fmt.Errorf("runner: schedule %s: %w", sc.cfg.Name, err)
		}
	}
	occ := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reasonix_schedule_occurrences_total", Help: "Schedule occurrences handled by this node, by schedule and outcome.",
	}, []string{"schedule", "outcome"})
	s.metrics.reg.MustRegister(occ)
	return scheduleSet{list: list, occurrences: occ}, nil
}

func parseSchedules(set *config.Config) ([]*scheduled, error) {
	out := make([]*scheduled, 0, len(set.Schedules))
	for _, sc := range set.Schedules {
		spec, err := cronspec.Parse(sc.Cron, sc.Timezone)
		if err != nil {
			return nil, fmt.Errorf("runner: schedule %s: %w", sc.Name, err)
		}
		sc.Posture = cmp.Or(sc.Posture, policy.PostureAsk)
		sc.MaxFailures = cmp.Or(sc.MaxFailures, config.DefaultMaxFailures)
		out = append(out, &scheduled{cfg: sc, spec: spec})
	}
	return out, nil
}

func (s *Service) scheduleNamed(name string) *scheduled {
	for _, sc := range s.sched.list {
		if sc.cfg.Name == name {
			return sc
		}
	}
	return nil
}

// ensureSchedules creates the durable state of new schedules, anchored now
// so that a schedule never fires for the time before it existed. Paused
// schedules stay paused across restarts. The service then starts the
// ticker that wakes them (see startMaintenance).
func (s *Service) ensureSchedules(ctx context.Context) error {
	now := s.now()
	for _, sc := range s.sched.list {
		st, err := s.st.EnsureSchedule(ctx, sc.cfg.Name, now)
		if err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		s.log.Info("runner: schedule", "schedule", sc.cfg.Name, "cron", sc.cfg.Cron, "timezone", sc.spec.Location().String(),
			"enabled", sc.cfg.IsEnabled(), "paused", st.Paused, "next", sc.spec.Next(st.Anchor))
	}
	return nil
}

// tickSchedules settles finished runs and fires, skips or misses what is
// due, once for every configured schedule.
func (s *Service) tickSchedules(ctx context.Context) error {
	var errs []error
	for _, sc := range s.sched.list {
		if s.stopping.Load() || ctx.Err() != nil {
			break
		}
		if err := s.tickSchedule(ctx, sc); err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", sc.cfg.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) tickSchedule(ctx context.Context, sc *scheduled) error {
	name := sc.cfg.Name
	st, err := s.st.Schedule(ctx, name)
	if err != nil {
		return err
	}
	running, ended, err := s.settleSchedule(ctx, sc, st)
	if err != nil {
		return err
	}
	now := s.now()
	if !sc.cfg.IsEnabled() {
		// A disabled schedule lets its occurrences pass uncounted, so that
		// enabling it later does not fire a catch-up for the disabled time.
		if occ := sc.spec.Latest(st.Anchor, now); !occ.IsZero() {
			_, err := s.st.AdvanceSchedule(ctx, name, st.Anchor, occ, store.PassQuiet)
			return err
		}
		return nil
	}
	if st.Paused {
		return nil
	}
	d := cron.Decide(cron.Input{Spec: sc.spec, Overlap: sc.cfg.Overlap, CatchUp: sc.cfg.CatchUp,
		Anchor: st.Anchor, Running: running, LastEnded: ended, Now: now})
	switch d.Action {
	case cron.Fire:
		_, _, err := s.fireSchedule(ctx, sc, st.Anchor, d.Occurrence, false)
		return err
	case cron.Skip, cron.Miss:
		why, msg := store.PassSkipped, "runner: schedule occurrence skipped: the previous run is still going"
		if d.Action == cron.Miss {
			why, msg = store.PassMissed, "runner: schedule occurrence missed: it is late and catch_up is none"
		}
		ok, err := s.st.AdvanceSchedule(ctx, name, st.Anchor, d.Occurrence, why)
		if ok {
			s.sched.occurrences.WithLabelValues(name, d.Action.String()).Inc()
			s.log.Info(msg, "schedule", name, "occurrence", d.Occurrence, "running_task", st.LastTaskID)
		}
		return err
	}
	return nil
}

// settleSchedule counts the end of the schedule's last run once (another
// node may get there first) and pauses the schedule after max_failures
// failures in a row. It reports whether the last run is still going and,
// if it ended, when.
func (s *Service) settleSchedule(ctx context.Context, sc *scheduled, st store.ScheduleState) (running bool, ended time.Time, err error) {
	if st.LastTaskID == "" {
		return false, time.Time{}, nil
	}
	task, err := s.st.Task(ctx, st.LastTaskID)
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
	name, limit := sc.cfg.Name, sc.cfg.MaxFailures
	reason := fmt.Sprintf("paused after %d failed runs in a row (the last: task %s, %s)", limit, task.ID, task.State)
	_, paused, err := s.st.SettleSchedule(ctx, name, task.ID, task.State, verdict(task.State), limit, reason)
	if err != nil {
		return false, task.FinishedAt, err
	}
	if paused {
		// Announced once, by the node whose settle paused it: in the log and
		// as an event of the failed task, which reaches the schedule's
		// notify targets like the rest of the task's events.
		s.log.Warn("runner: schedule paused", "schedule", name, "failures", limit, "task", task.ID, "state", task.State)
		s.emitLogged(ctx, task.ID, "schedule_paused", map[string]any{"schedule": name, "reason": reason, "failures": limit})
	}
	return false, task.FinishedAt, nil
}

// verdict is how a run's end counts towards max_failures: cancelling or
// interrupting a run is a person's or the host's doing, not the schedule's.
func verdict(st store.State) store.Verdict {
	switch st {
	case store.StateSucceeded:
		return store.VerdictSuccess
	case store.StateFailed, store.StateBlocked, store.StateBudgetExhausted:
		return store.VerdictFailure
	}
	return store.VerdictNeutral
}

// fireSchedule submits a run of sc in the same transaction that moves its
// anchor from anchor to occ (or, manual, records a run requested now).
// fired is false when another node fired the occurrence first or the
// schedule was paused meanwhile.
func (s *Service) fireSchedule(ctx context.Context, sc *scheduled, anchor, occ time.Time, manual bool) (store.Task, bool, error) {
	if s.stopping.Load() {
		return store.Task{}, false, failf(ErrUnavailable, "the service is shutting down; try again shortly")
	}
	c := sc.cfg
	runAt, key := occ, cron.Key(c.Name, occ)
	if manual {
		runAt = s.now().UTC().Truncate(time.Second)
		key = "schedule:" + c.Name + ":manual:" + newRef() + newRef()
	}
	req := s.scheduleRequest(sc, key)
	if err := s.expandCommand(ctx, &req); err != nil {
		return store.Task{}, false, err
	}
	if err := req.validate(s); err != nil {
		return store.Task{}, false, err
	}
	task, fired, err := s.st.FireSchedule(ctx, store.Fire{
		Name: c.Name, Manual: manual, Anchor: anchor, Occurrence: occ, RunAt: runAt, DedupeKey: key,
		Task: store.NewTask{Source: req.Source, Requester: req.Requester, Prompt: req.Prompt, Goal: req.Goal,
			Workspace: req.Workspace, Posture: req.Posture, Notify: req.Notify,
			Events: s.arrival(req.Source, map[string]string{"schedule": c.Name, "occurrence": runAt.UTC().Format(time.RFC3339)})},
	})
	if err != nil || !fired {
		return store.Task{}, false, mapStoreErr(err, "schedule "+c.Name)
	}
	s.accepted(task)
	outcome := "fire"
	if manual {
		outcome = "manual"
	}
	s.sched.occurrences.WithLabelValues(c.Name, outcome).Inc()
	// The run's origin, for whoever reads the task: which schedule and which
	// occurrence (the dedupe key's time), or that a person asked for it.
	s.emitLogged(ctx, task.ID, "schedule", map[string]any{"schedule": c.Name, "occurrence": runAt, "manual": manual})
	s.log.Info("runner: schedule fired", "schedule", c.Name, "occurrence", runAt, "manual", manual, "task", task.ID)
	return task, true, nil
}

// scheduleRequest is the intake of one run of sc under dedupe key key.
func (s *Service) scheduleRequest(sc *scheduled, key string) TaskRequest {
	c := sc.cfg
	notify := make([]store.NotifyTarget, 0, len(c.Notify))
	for _, n := range c.Notify {
		notify = append(notify, store.NotifyTarget{Transport: n.Transport, Channel: n.Channel, Thread: n.Thread})
	}
	return TaskRequest{Source: store.SourceCron, Requester: cron.Requester(c.Name), Prompt: c.Prompt,
		Command: c.Command, Args: c.Args, Goal: c.Goal, BudgetUSD: c.BudgetUSD, Workspace: c.Workspace,
		Posture: c.Posture, Notify: notify, DedupeKey: key}
}
