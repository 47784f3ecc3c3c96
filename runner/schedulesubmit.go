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
	"reasonix/runner/internal/maintenance"
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
	firer       *maintenance.ScheduleFirer // wakes them (startMaintenance)
}

// loadSchedules parses the configured schedules and checks each run they
// would submit (CheckSchedules), so a schedule whose prompt the intake
// would refuse stops New rather than failing every tick.
func (s *Service) loadSchedules() (scheduleSet, error) {
	list, err := checkedSchedules(s.set)
	if err != nil {
		return scheduleSet{}, err
	}
	occ := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reasonix_schedule_occurrences_total", Help: "Schedule occurrences handled by this node, by schedule and outcome.",
	}, []string{"schedule", "outcome"})
	s.metrics.reg.MustRegister(occ)
	return scheduleSet{list: list, occurrences: occ, firer: s.newScheduleFirer(list, occ)}, nil
}

// CheckSchedules is the check New makes of set's [[schedules]]: each
// expression parses and each run a schedule would submit passes the
// intake's own validation. `config check` runs it, so a schedule it
// accepts is one serve starts with.
func CheckSchedules(set *config.Config) error {
	_, err := checkedSchedules(set)
	return err
}

func checkedSchedules(set *config.Config) ([]*scheduled, error) {
	list, err := parseSchedules(set)
	if err != nil {
		return nil, err
	}
	for _, sc := range list {
		req := scheduleRequest(sc, cron.Key(sc.cfg.Name, time.Time{}))
		if req.Command != "" && req.Prompt == "" {
			// The command is read from the repository when the schedule
			// fires; its name stands in for the prompt here.
			req.Prompt = "/" + req.Command
		}
		if err := req.validate(set); err != nil {
			var re *Error
			if errors.As(err, &re) {
				err = errors.New(re.Message)
			}
			return nil, fmt.Errorf("runner: schedule %s: %w", sc.cfg.Name, err)
		}
	}
	return list, nil
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

// newScheduleFirer hands the schedules' firing (package maintenance) the
// schedules, the store, and the service's intake to submit their runs.
func (s *Service) newScheduleFirer(list []*scheduled, occ *prometheus.CounterVec) *maintenance.ScheduleFirer {
	scheds := make([]maintenance.Schedule, 0, len(list))
	for _, sc := range list {
		scheds = append(scheds, maintenance.Schedule{Name: sc.cfg.Name, Spec: sc.spec, Overlap: sc.cfg.Overlap,
			CatchUp: sc.cfg.CatchUp, Enabled: sc.cfg.IsEnabled(), MaxFailures: sc.cfg.MaxFailures})
	}
	return maintenance.NewScheduleFirer(maintenance.ScheduleFirerConfig{
		Store: s.st, Schedules: scheds,
		Fire: func(ctx context.Context, name string, anchor, at time.Time) error {
			_, _, err := s.fireSchedule(ctx, s.scheduleNamed(name), anchor, at, false)
			return err
		},
		Passed: func(name string, a cron.Action) { occ.WithLabelValues(name, a.String()).Inc() },
		Paused: func(ctx context.Context, name string, task store.Task, failures int, reason string) {
			s.emitLogged(ctx, task.ID, "schedule_paused", map[string]any{"schedule": name, "reason": reason, "failures": failures})
		},
		Stopping: s.stopping.Load, Now: s.now, Log: s.log,
	})
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
	req := scheduleRequest(sc, key)
	if err := s.expandCommand(ctx, &req); err != nil {
		return store.Task{}, false, err
	}
	if err := req.validate(s.set); err != nil {
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
func scheduleRequest(sc *scheduled, key string) TaskRequest {
	c := sc.cfg
	notify := make([]store.NotifyTarget, 0, len(c.Notify))
	for _, n := range c.Notify {
		notify = append(notify, store.NotifyTarget{Transport: n.Transport, Channel: n.Channel, Thread: n.Thread})
	}
	return TaskRequest{Source: store.SourceCron, Requester: cron.Requester(c.Name), Prompt: c.Prompt,
		Command: c.Command, Args: c.Args, Goal: c.Goal, BudgetUSD: c.BudgetUSD, Workspace: c.Workspace,
		Posture: c.Posture, Notify: notify, DedupeKey: key}
}
