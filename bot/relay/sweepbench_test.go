package relay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot/relay"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/store"
)

// BenchmarkScanSweep is one pass of the relay's scan with 100 running
// tasks relayed to Slack, 10 of them the current runs of 10 schedules:
// the live tasks listed and each checked for a watcher, the tasks ended
// since the last pass, and every schedule's health (paused, failing,
// late, missed), each judged from the store. Issue 26 budgets the stall
// and schedule-health checks at 1 ms per 100 running tasks per sweep. The
// stall check proper is a comparison per watched task on its refresh
// tick, and the store's count behind the reasonix_tasks_stalled gauge is
// store.BenchmarkCountStalled. Sub-benchmarks: the whole pass, and apart
// the schedules' health and the live tasks' list it reads.
//
//	go test -run '^$' -bench ScanSweep -count 5 ./bot/relay
func BenchmarkScanSweep(b *testing.B) {
	const running, schedules = 100, 10
	release := make(chan struct{})
	model := func(agenttest.Request) agenttest.Turn {
		<-release
		return agenttest.Turn{Text: "done"}
	}
	set := config.Default()
	set.Runner.MaxConcurrentTasks = running + 5
	notify := []config.NotifyTarget{{Transport: "slack", Channel: channel}}
	for i := range schedules {
		set.Schedules = append(set.Schedules, config.Schedule{Name: fmt.Sprintf("nightly-%d", i), Cron: "0 3 1 1 *", Prompt: "scheduled work",
			Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3, Notify: notify})
	}
	// The relay's own scan is left at an hour: the benchmark makes the
	// passes it measures.
	r := newRigOpts(b, rigOpts{set: set, model: model, turns: running + 10, tune: func(c *relay.Config) { c.ScanInterval = time.Hour }})
	b.Cleanup(func() { close(release) }) // before the rig stops: the tasks end
	ctx := context.Background()
	admin := runner.Principal{ID: "token:admin", Role: store.RoleAdmin}
	for i := range schedules {
		if _, err := r.svc.RunSchedule(ctx, admin, fmt.Sprintf("nightly-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range running - schedules {
		if _, _, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice",
			Prompt: fmt.Sprintf("long task %d", i), Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel}}}); err != nil {
			b.Fatal(err)
		}
	}
	eventually(b, "100 running tasks", func() bool {
		page, err := r.svc.Tasks(ctx, store.TaskFilter{States: []store.State{store.StateRunning}, Limit: 500})
		return err == nil && len(page.Tasks) == running
	})
	r.relay.ScanOnce() // starts the watchers; the passes measured find them
	list, err := r.svc.Schedules(ctx)
	if err != nil || len(list) != schedules {
		b.Fatalf("schedules = %d, %v", len(list), err)
	}
	for _, s := range list {
		if s.LastTaskID == "" || s.LastOutcome != "running" {
			b.Fatalf("schedule %s: last task %q, %q; want its run going", s.Name, s.LastTaskID, s.LastOutcome)
		}
	}
	// The whole pass, and its two reads the budget names apart: the
	// schedules with their health, and the live tasks the watchers are
	// checked against.
	b.Run("pass", func(b *testing.B) {
		for b.Loop() {
			r.relay.ScanOnce()
		}
	})
	b.Run("schedule-health", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.svc.Schedules(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("live-tasks", func(b *testing.B) {
		f := runner.TaskFilter{States: []runner.State{runner.StateQueued, runner.StateRunning, runner.StateWaitingApproval, runner.StateWaitingCI}, Limit: 500}
		for b.Loop() {
			if page, err := r.svc.Tasks(ctx, f); err != nil || len(page.Tasks) != running {
				b.Fatalf("%d live tasks, %v", len(page.Tasks), err)
			}
		}
	})
}
