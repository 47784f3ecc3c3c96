package runner_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/session"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// scheduleSettings configures one schedule; the loop's own ticker is left
// at an hour so that only the test's TickSchedules calls fire.
func scheduleSettings(sc config.Schedule) *config.Config {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	sc.Prompt = "scheduled work"
	set.Schedules = []config.Schedule{sc}
	return set
}

// quietLoop leaves ticking to the test. The test clock jumps by hours while
// a run goes on, so a running task's heartbeat must not go stale with it.
func quietLoop(c *runner.Config) {
	c.ScheduleInterval = time.Hour
	c.StaleAfter = 1000 * time.Hour
}

func tick(t *testing.T, svc *runner.Service) {
	t.Helper()
	if err := svc.TickSchedules(context.Background()); err != nil {
		t.Fatalf("TickSchedules: %v", err)
	}
}

func scheduleTasks(t *testing.T, svc *runner.Service, name string) []store.Task {
	t.Helper()
	page, err := svc.Tasks(context.Background(), store.TaskFilter{Requester: "schedule:" + name, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return page.Tasks
}

func scheduleNamed(t *testing.T, svc *runner.Service, name string) runner.Schedule {
	t.Helper()
	s, err := svc.ScheduleByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gated answers once release is closed: its runs stay running until then.
type gated struct{ release chan struct{} }

func (g *gated) Name() string { return "gated" }

func (g *gated) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return echoProvider{}.Stream(ctx, req)
}

// failing refuses every request, so every run fails.
type failing struct{}

func (failing) Name() string { return "failing" }

func (failing) Stream(context.Context, agent.Request) (<-chan agent.Chunk, error) {
	return nil, errors.New("the provider is down")
}

func TestScheduleEverySecondFires(t *testing.T) {
	clk := newClock()
	svc := runnertest.Start(t, runnertest.Options{Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop,
		Settings: scheduleSettings(config.Schedule{Name: "tick", Cron: "@every 1s", Goal: true})})
	tick(t, svc)
	if n := len(scheduleTasks(t, svc, "tick")); n != 0 {
		t.Fatalf("%d runs before the first second passed", n)
	}
	clk.Advance(time.Second)
	tick(t, svc)
	tick(t, svc) // the same occurrence again: nothing new
	tasks := scheduleTasks(t, svc, "tick")
	if len(tasks) != 1 {
		t.Fatalf("%d runs after one second, want 1", len(tasks))
	}
	task := tasks[0]
	if task.Source != store.SourceCron || task.Requester != "schedule:tick" || !task.Goal || task.Posture != "ask" {
		t.Errorf("task = %+v", task)
	}
	origin := runnertest.Events(t, svc, task.ID, "schedule")
	if len(origin) != 1 || !contains(string(origin[0].Payload), `"schedule":"tick"`) || !contains(string(origin[0].Payload), `"manual":false`) {
		t.Errorf("origin events = %+v", origin)
	}
	// The echo model never progresses: its goal ends when its redirects run out.
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateBlocked, store.StateFailed, store.StateBudgetExhausted)
	clk.Advance(time.Second)
	tick(t, svc)
	if n := len(scheduleTasks(t, svc, "tick")); n != 2 {
		t.Fatalf("%d runs after two seconds, want 2", n)
	}
	if s := scheduleNamed(t, svc, "tick"); s.LastOutcome == "" || s.Next.IsZero() || s.Paused {
		t.Errorf("listed as %+v", s)
	}
}

// TestScheduleOverlapSkip: an occurrence that comes while the previous run
// is still going is recorded as skipped, and the next after it ends fires.
func TestScheduleOverlapSkip(t *testing.T) {
	clk := newClock()
	prov := &gated{release: make(chan struct{})}
	svc := runnertest.Start(t, runnertest.Options{Provider: prov, Now: clk.Now, Configure: quietLoop,
		Settings: scheduleSettings(config.Schedule{Name: "slow", Cron: "@hourly"})})
	clk.Advance(time.Hour)
	tick(t, svc)
	tasks := scheduleTasks(t, svc, "slow")
	if len(tasks) != 1 {
		t.Fatalf("%d runs, want 1", len(tasks))
	}
	runnertest.WaitState(t, svc, tasks[0].ID, 0, store.StateRunning)
	clk.Advance(time.Hour)
	tick(t, svc)
	if n := len(scheduleTasks(t, svc, "slow")); n != 1 {
		t.Fatalf("%d runs while the first still runs, want 1", n)
	}
	s := scheduleNamed(t, svc, "slow")
	if s.Skipped != 1 || s.LastSkippedAt.IsZero() || s.LastOutcome != "running" {
		t.Errorf("after an overlapping tick: %+v", s)
	}
	close(prov.release)
	runnertest.WaitState(t, svc, tasks[0].ID, 0, store.StateSucceeded)
	tick(t, svc) // settles the run; nothing is due
	if s := scheduleNamed(t, svc, "slow"); s.LastOutcome != "succeeded" || s.Skipped != 1 {
		t.Errorf("after the run ended: %+v", s)
	}
	clk.Advance(time.Hour)
	tick(t, svc)
	if n := len(scheduleTasks(t, svc, "slow")); n != 2 {
		t.Fatalf("%d runs after the next occurrence, want 2", n)
	}
	rec := httptest.NewRecorder()
	svc.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`reasonix_schedule_occurrences_total{outcome="skip",schedule="slow"} 1`,
		`reasonix_schedule_occurrences_total{outcome="fire",schedule="slow"} 2`, `reasonix_tasks_submitted_total{source="cron"} 2`} {
		if !contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestScheduleCatchUp: six to seven hours of downtime give exactly one catch-up run
// (the latest occurrence) with catch_up = "latest", and none with "none".
func TestScheduleCatchUp(t *testing.T) {
	for _, c := range []struct {
		catchUp string
		runs    int
	}{{config.CatchUpLatest, 1}, {config.CatchUpNone, 0}} {
		t.Run(c.catchUp, func(t *testing.T) {
			clk := newClock()
			svc := runnertest.Start(t, runnertest.Options{Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop,
				Settings: scheduleSettings(config.Schedule{Name: "hourly", Cron: "0 * * * *", CatchUp: c.catchUp})})
			// Six to seven hours down, ending at half past an hour: the
			// clock starts at the wall clock's time, and a gap ending just
			// after an hour would make that occurrence due, not missed.
			end := clk.Now().Truncate(time.Hour).Add(7*time.Hour + 30*time.Minute)
			clk.Advance(end.Sub(clk.Now()))
			tick(t, svc)
			tick(t, svc)
			tasks := scheduleTasks(t, svc, "hourly")
			if len(tasks) != c.runs {
				t.Fatalf("%d runs after a gap of over six hours, want %d", len(tasks), c.runs)
			}
			s := scheduleNamed(t, svc, "hourly")
			if c.runs == 1 {
				if want := clk.Now().Truncate(time.Hour); !s.LastRunAt.Equal(want) {
					t.Errorf("the catch-up ran occurrence %v, want the latest, %v", s.LastRunAt, want)
				}
			} else if s.Missed != 1 {
				t.Errorf("missed = %d, want 1", s.Missed)
			}
		})
	}
}

// TestSchedulePauseSurvivesRestart: a paused schedule stays paused for a
// new service on the same database, and resuming does not catch up the
// paused time.
func TestSchedulePauseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	set := scheduleSettings(config.Schedule{Name: "nightly", Cron: "@hourly"})
	admin := runner.Principal{ID: "token:root", Role: store.RoleAdmin}
	first := runnertest.Start(t, runnertest.Options{Store: st, Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop, Settings: set})
	if _, err := first.PauseSchedule(ctx, runner.Principal{ID: "token:bob", Role: store.RoleApprove}, "nightly"); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("pause by an approver: %v, want ErrForbidden", err)
	}
	if _, err := first.PauseSchedule(ctx, admin, "weekly"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("pause of an unknown schedule: %v, want ErrNotFound", err)
	}
	if s, err := first.PauseSchedule(ctx, admin, "nightly"); err != nil || !s.Paused || !s.Next.IsZero() {
		t.Fatalf("pause: %+v, %v", s, err)
	}
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	second := runnertest.Start(t, runnertest.Options{Store: st, Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop, Settings: set})
	clk.Advance(3 * time.Hour)
	tick(t, second)
	if s := scheduleNamed(t, second, "nightly"); !s.Paused {
		t.Fatalf("after a restart: %+v, want paused", s)
	}
	if n := len(scheduleTasks(t, second, "nightly")); n != 0 {
		t.Fatalf("a paused schedule ran %d times", n)
	}
	if _, err := second.ResumeSchedule(ctx, admin, "nightly"); err != nil {
		t.Fatal(err)
	}
	tick(t, second)
	if n := len(scheduleTasks(t, second, "nightly")); n != 0 {
		t.Fatalf("resume caught up the paused time with %d runs", n)
	}
	clk.Advance(time.Hour)
	tick(t, second)
	if n := len(scheduleTasks(t, second, "nightly")); n != 1 {
		t.Fatalf("%d runs an hour after resuming, want 1", n)
	}
	// Run by hand: a run now, also while paused, recorded as the last run.
	if _, err := second.PauseSchedule(ctx, admin, "nightly"); err != nil {
		t.Fatal(err)
	}
	task, err := second.RunSchedule(ctx, admin, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if s := scheduleNamed(t, second, "nightly"); s.LastTaskID != task.ID {
		t.Errorf("the manual run is not the last run: %+v", s)
	}
	if ev := runnertest.Events(t, second, task.ID, "schedule"); len(ev) != 1 || !contains(string(ev[0].Payload), `"manual":true`) {
		t.Errorf("manual origin events = %+v", ev)
	}
}

// TestScheduleAutoPause: max_failures failed runs in a row pause the
// schedule, once, with an event on the last failed run.
func TestScheduleAutoPause(t *testing.T) {
	clk := newClock()
	svc := runnertest.Start(t, runnertest.Options{Provider: failing{}, Now: clk.Now, Configure: quietLoop,
		Settings: scheduleSettings(config.Schedule{Name: "flaky", Cron: "@hourly", MaxFailures: 2})})
	var last store.Task
	for i := range 2 {
		clk.Advance(time.Hour)
		tick(t, svc)
		tasks := scheduleTasks(t, svc, "flaky")
		if len(tasks) != i+1 {
			t.Fatalf("run %d: %d runs", i+1, len(tasks))
		}
		last = runnertest.WaitState(t, svc, tasks[0].ID, 0, store.StateFailed)
	}
	tick(t, svc)
	s := scheduleNamed(t, svc, "flaky")
	if !s.Paused || s.Failures != 2 || !contains(s.PausedReason, "2 failed runs in a row") {
		t.Fatalf("after two failures: %+v, want paused", s)
	}
	if ev := runnertest.Events(t, svc, last.ID, "schedule_paused"); len(ev) != 1 {
		t.Errorf("schedule_paused events = %d, want 1", len(ev))
	}
	clk.Advance(time.Hour)
	tick(t, svc)
	if n := len(scheduleTasks(t, svc, "flaky")); n != 2 {
		t.Errorf("an auto-paused schedule ran again (%d runs)", n)
	}
}

// TestScheduleTwoNodesPostgres: two services on one Postgres database tick
// the same schedule concurrently; every occurrence runs exactly once.
func TestScheduleTwoNodesPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	clk := newClock()
	open := func() *store.Store {
		st, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres, DSN: dsn, Logger: storetest.Quiet(), Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	set := scheduleSettings(config.Schedule{Name: "tick", Cron: "@every 1s", Overlap: config.OverlapQueue})
	nodes := []*runner.Service{
		runnertest.Start(t, runnertest.Options{Store: open(), Provider: echoProvider{}, Now: clk.Now, Settings: set,
			Configure: func(c *runner.Config) { quietLoop(c); c.Node = "A" }}),
		runnertest.Start(t, runnertest.Options{Store: open(), Provider: echoProvider{}, Now: clk.Now, Settings: set,
			Configure: func(c *runner.Config) { quietLoop(c); c.Node = "B" }}),
	}
	const occurrences = 10
	for i := range occurrences {
		clk.Advance(time.Second)
		var wg sync.WaitGroup
		for _, n := range nodes {
			for range 3 {
				wg.Go(func() {
					if err := n.TickSchedules(context.Background()); err != nil {
						t.Errorf("tick: %v", err)
					}
				})
			}
		}
		wg.Wait()
		tasks := scheduleTasks(t, nodes[0], "tick")
		if len(tasks) != i+1 {
			t.Fatalf("after occurrence %d: %d runs, want %d", i+1, len(tasks), i+1)
		}
		runnertest.WaitState(t, nodes[0], tasks[0].ID, 0, store.StateSucceeded)
	}
}

// TestScheduleDSTBerlin runs a 02:30 Europe/Berlin schedule through both
// changes of 2026, ticking every ten minutes: no run on the spring-forward
// day (29 March has no 02:30), two on the fall-back day (02:30 CEST and
// 02:30 CET), one on the days around them.
func TestScheduleDSTBerlin(t *testing.T) {
	ber, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		start time.Time
		want  []string
	}{
		{"spring forward", time.Date(2026, 3, 28, 0, 0, 0, 0, ber), []string{"2026-03-28 02:30 CET", "2026-03-30 02:30 CEST"}},
		{"fall back", time.Date(2026, 10, 24, 0, 0, 0, 0, ber), []string{"2026-10-24 02:30 CEST", "2026-10-25 02:30 CEST", "2026-10-25 02:30 CET", "2026-10-26 02:30 CET"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := &clock{t: c.start}
			svc := runnertest.Start(t, runnertest.Options{Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop,
				Settings: scheduleSettings(config.Schedule{Name: "night", Cron: "30 2 * * *", Timezone: "Europe/Berlin", Overlap: config.OverlapQueue})})
			var runs []string
			for end := c.start.Add(3*24*time.Hour - time.Hour); clk.Now().Before(end); {
				clk.Advance(10 * time.Minute)
				tick(t, svc)
				s := scheduleNamed(t, svc, "night")
				if r := s.LastRunAt.In(ber).Format("2006-01-02 15:04 MST"); !s.LastRunAt.IsZero() && (len(runs) == 0 || runs[len(runs)-1] != r) {
					runs = append(runs, r)
					runnertest.WaitState(t, svc, s.LastTaskID, 0, store.StateSucceeded)
				}
			}
			if len(runs) != len(c.want) {
				t.Fatalf("runs %v, want %v", runs, c.want)
			}
			for i := range runs {
				if runs[i] != c.want[i] {
					t.Fatalf("runs %v, want %v", runs, c.want)
				}
			}
			if n := len(scheduleTasks(t, svc, "night")); n != len(c.want) {
				t.Errorf("%d tasks, want %d", n, len(c.want))
			}
		})
	}
}

// TestScheduleRefusedAtStart: a schedule whose runs the intake would refuse
// stops New with a message naming it, instead of failing at every tick.
func TestScheduleRefusedAtStart(t *testing.T) {
	set := scheduleSettings(config.Schedule{Name: "huge", Cron: "@daily", Goal: true})
	set.Schedules[0].Prompt = strings.Repeat("x", 20<<10)
	_, err := runner.New(runner.Config{Store: storetest.SQLite(t, store.Config{}), Settings: set,
		Providers: func(string) (session.Model, error) { return session.Model{}, nil }})
	if err == nil || !contains(err.Error(), "schedule huge") || !contains(err.Error(), "goal's prompt") {
		t.Fatalf("New = %v, want the goal prompt limit named for schedule huge", err)
	}
}
