package relay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/bot/bottest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// BenchmarkApprovalReachesEveryCopy: a task started in a DM asks for an
// approval; the request must be visible both in the DM and in the
// approver's own DM. At the relay's default pacing (one write per second
// per channel) against a fake Slack enforcing Slack's limits. Metric: p50
// and max of approval created → the last copy posted. Run with
//
//	go test -run '^$' -bench ApprovalReachesEveryCopy -benchtime 10x ./bot/relay
func BenchmarkApprovalReachesEveryCopy(b *testing.B) {
	const quietFor = 3 * time.Second
	r := newRigOpts(b, rigOpts{model: approvalScript, limits: slackLimits})
	ctx := context.Background()
	var lat, orig1, copy1 []time.Duration
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		prompt := fmt.Sprintf("reach me %d", i)
		r.slack.DM(alice, "DALI", prompt)
		var task store.Task
		eventually(b, "the task", func() bool {
			page, err := r.svc.Tasks(ctx, store.TaskFilter{Search: prompt, Limit: 5})
			if err == nil && len(page.Tasks) == 1 {
				task = page.Tasks[0]
			}
			return err == nil && len(page.Tasks) == 1
		})
		var a store.Approval
		eventually(b, "the approval", func() bool {
			list, err := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: task.ID})
			if err == nil && len(list) == 1 {
				a = list[0]
			}
			return err == nil && len(list) == 1
		})
		var orig, cp bottest.SlackMessage
		for orig.TS == "" || cp.TS == "" {
			<-tick.C
			for _, m := range r.slack.Messages() {
				if len(m.Buttons) == 0 || m.Posted.Before(a.CreatedAt) {
					continue
				}
				switch m.Channel {
				case "DALI":
					orig = m
				case bottest.DMChannel(bob):
					cp = m
				}
			}
		}
		orig1 = append(orig1, orig.Posted.Sub(a.CreatedAt))
		copy1 = append(copy1, cp.Posted.Sub(a.CreatedAt))
		last := orig.Posted
		if cp.Posted.After(last) {
			last = cp.Posted
		}
		lat = append(lat, last.Sub(a.CreatedAt))
		r.slack.Click(bob, cp.Channel, cp.TS, cp.Buttons[0].Value)
		runnertest.WaitState(b, r.svc, task.ID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
		// The next request starts in a DM quiet for quietFor, as a person's
		// next task does: the report posted, the channel's pacing slot free
		// and the platform's burst allowance back.
		eventually(b, "the report", func() bool {
			for _, m := range r.slack.Messages() {
				if m.Channel == "DALI" && strings.Contains(m.Text, "finished:") && !m.Posted.Before(a.CreatedAt) {
					return true
				}
			}
			return false
		})
		for quiet := false; !quiet; {
			<-tick.C
			quiet = true
			for _, m := range r.slack.Messages() {
				if m.Channel == "DALI" || m.Channel == bottest.DMChannel(bob) {
					quiet = quiet && time.Since(m.Posted) > quietFor && time.Since(m.Edited) > quietFor
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 0.5).Seconds()*1000, "p50-ms")
	b.ReportMetric(percentile(lat, 1).Seconds()*1000, "max-ms")
	b.ReportMetric(percentile(orig1, 0.5).Seconds()*1000, "thread-p50-ms")
	b.ReportMetric(percentile(copy1, 0.5).Seconds()*1000, "copy-p50-ms")
	b.ReportMetric(float64(r.slack.Violations()), "violations")
}
