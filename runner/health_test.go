package runner_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// metric is the value of the sample named by line ("name{labels}") in
// text, or "" when there is none.
func metric(text, line string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestScheduleHealth: a schedule is ok until an occurrence goes unfired
// well past its time (late, saying so), ok again once it ran, and its last
// good run is a metric operators can alert on.
func TestScheduleHealth(t *testing.T) {
	clk := newClock()
	svc := runnertest.Start(t, runnertest.Options{Provider: echoProvider{}, Now: clk.Now, Configure: quietLoop,
		Settings: scheduleSettings(config.Schedule{Name: "hourly", Cron: "@hourly"})})
	tick(t, svc)
	fresh := scheduleNamed(t, svc, "hourly")
	if fresh.Health != runner.HealthOK || fresh.HealthReason != "" {
		t.Fatalf("a fresh schedule: %s %q, want ok", fresh.Health, fresh.HealthReason)
	}
	const series = `reasonix_schedule_last_success_timestamp_seconds{schedule="hourly"}`
	if v := metric(scrape(t, svc), series); v != "" {
		t.Errorf("a schedule that never ran has a last success: %s", v)
	}

	clk.Advance(fresh.Next.Sub(clk.Now()) + 30*time.Second) // due, within the slack
	if s := scheduleNamed(t, svc, "hourly"); s.Health != runner.HealthOK {
		t.Errorf("30 s past its time: %s %q, want ok", s.Health, s.HealthReason)
	}
	clk.Advance(5 * time.Minute) // nobody fired it
	if s := scheduleNamed(t, svc, "hourly"); s.Health != runner.HealthLate || !strings.Contains(s.HealthReason, "has not started") {
		t.Errorf("5 min past its time: %s %q, want late", s.Health, s.HealthReason)
	}

	tick(t, svc)
	tasks := scheduleTasks(t, svc, "hourly")
	if len(tasks) != 1 {
		t.Fatalf("%d runs, want 1", len(tasks))
	}
	done := runnertest.WaitState(t, svc, tasks[0].ID, 0, store.StateSucceeded)
	tick(t, svc) // settles the ended run
	s := scheduleNamed(t, svc, "hourly")
	if s.Health != runner.HealthOK || s.LastSuccessAt.IsZero() || s.LastSuccessAt.Before(done.CreatedAt) {
		t.Fatalf("after a good run: %s %q, last success %v", s.Health, s.HealthReason, s.LastSuccessAt)
	}
	want := fmt.Sprintf("%g", float64(s.LastSuccessAt.UnixMilli())/1000)
	if v := metric(scrape(t, svc), series); v != want {
		t.Errorf("%s = %q, want %s", series, v, want)
	}
}

// TestFailingScheduleHealth: failed runs make a schedule failing, then
// paused, each with its reason; its last success stays where it was.
func TestFailingScheduleHealth(t *testing.T) {
	clk := newClock()
	svc := runnertest.Start(t, runnertest.Options{Provider: failing{}, Now: clk.Now, Configure: quietLoop,
		Settings: scheduleSettings(config.Schedule{Name: "flaky", Cron: "@hourly", MaxFailures: 2})})
	for i := range 2 {
		clk.Advance(time.Hour)
		tick(t, svc)
		runnertest.WaitState(t, svc, scheduleTasks(t, svc, "flaky")[0].ID, 0, store.StateFailed)
		tick(t, svc)
		s := scheduleNamed(t, svc, "flaky")
		switch {
		case i == 0 && (s.Health != runner.HealthFailing || !strings.Contains(s.HealthReason, "last 1 run(s) failed")):
			t.Errorf("after one failure: %s %q, want failing", s.Health, s.HealthReason)
		case i == 1 && (s.Health != runner.HealthPaused || !strings.Contains(s.HealthReason, "paused after 2 failed runs")):
			t.Errorf("after two failures: %s %q, want paused with the reason", s.Health, s.HealthReason)
		}
		if !s.LastSuccessAt.IsZero() {
			t.Errorf("a schedule that never succeeded has a last success: %v", s.LastSuccessAt)
		}
	}
}

// TestPendingAndStalledMetrics: /metrics counts the approvals waiting for
// a person and the running tasks gone quiet for stall_after, across the
// store (so every node reports the same).
func TestPendingAndStalledMetrics(t *testing.T) {
	clk := newClock()
	rt := newRouter()
	rt.script("make out.txt", calls(bashCall("c1", "echo hi > out.txt")), answer("done"))
	g := &gated{release: make(chan struct{})}
	defer close(g.release)
	set := settings(2)
	set.Runner.StallAfter = 10 * time.Minute
	svc := runnertest.Start(t, runnertest.Options{Provider: thinkLong{rt, g}, Now: clk.Now, Settings: set,
		Configure: func(c *runner.Config) { c.StaleAfter = 1000 * time.Hour }})
	ctx := context.Background()
	a, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "make out.txt", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	waitPending(t, svc, a.ID)
	quiet, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "think long"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, quiet.ID, 0, store.StateRunning)
	text := scrape(t, svc)
	if v := metric(text, "reasonix_approvals_pending"); v != "1" {
		t.Errorf("reasonix_approvals_pending = %q, want 1", v)
	}
	if v := metric(text, "reasonix_tasks_stalled"); v != "0" {
		t.Errorf("reasonix_tasks_stalled before the silence = %q, want 0", v)
	}
	clk.Advance(11 * time.Minute)
	if v := metric(scrape(t, svc), "reasonix_tasks_stalled"); v != "1" {
		t.Errorf("reasonix_tasks_stalled after 11 quiet minutes = %q, want 1 (the waiting task is no stall)", v)
	}
}

// thinkLong sends the task "think long" to a gated model (it stays
// running, silent, until released) and every other to the router.
type thinkLong struct {
	*router
	g *gated
}

func (p thinkLong) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser && m.Content == "think long" {
			return p.g.Stream(ctx, req)
		}
	}
	return p.router.Stream(ctx, req)
}
