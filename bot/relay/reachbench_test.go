package relay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/bot/bottest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// reachCase is one way an approval request is copied to where an
// approver sees it.
type reachCase struct {
	name string
	bot  *config.Bot // nil: the rig's default
	// home is where the task is asked and its request posted; copyTo is
	// where the copy with buttons must appear.
	home, copyTo string
	// members, when set, are the home channel's members (bob is left out,
	// so he is an approver outside it).
	members []string
	ask     func(r *rig, prompt string)
}

// BenchmarkApprovalReachesEveryCopy: a task asks for an approval, and the
// request must be visible both where the task was asked (the requester's
// DM, or the task's thread in a channel) and in the copy an approver
// outside it decides from. Three cases:
//
//   - dm-to-dm: asked in a DM, copied to the approver's own DM;
//   - dm-to-approvals-channel: asked in a DM, copied to [bot]
//     approvals_channel;
//   - thread-to-dm: asked in a channel the approver is not in, the
//     request posted in the task's thread and copied to the approver's DM.
//
// At the relay's default pacing (one write per second per channel)
// against a fake Slack enforcing Slack's limits. Metrics: p50 and max of
// approval created → the last copy posted (the issue's "every copy
// visible"), and p50 of each message alone. Run with
//
//	go test -run '^$' -bench ApprovalReachesEveryCopy -benchtime 10x ./bot/relay
func BenchmarkApprovalReachesEveryCopy(b *testing.B) {
	const approvals = "C0APPR"
	withApprovals := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel, approvals}, Approvers: []string{alice, bob}}, ApprovalsChannel: "slack:" + approvals}
	cases := []reachCase{
		{name: "dm-to-dm", home: "DALI", copyTo: bottest.DMChannel(bob),
			ask: func(r *rig, p string) { r.slack.DM(alice, "DALI", p) }},
		{name: "dm-to-approvals-channel", bot: &withApprovals, home: "DALI", copyTo: approvals,
			ask: func(r *rig, p string) { r.slack.DM(alice, "DALI", p) }},
		{name: "thread-to-dm", home: channel, copyTo: bottest.DMChannel(bob), members: []string{alice, mallory},
			ask: func(r *rig, p string) { r.slack.Mention(alice, channel, "", p) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchReach(b, c) })
	}
}

func benchReach(b *testing.B, c reachCase) {
	const quietFor = 3 * time.Second
	r := newRigOpts(b, rigOpts{model: approvalScript, limits: slackLimits, bot: c.bot})
	if c.members != nil {
		r.slack.SetMembers(c.home, c.members...)
	}
	ctx := context.Background()
	var lat, orig1, copy1 []time.Duration
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		prompt := fmt.Sprintf("reach me %d", i)
		c.ask(r, prompt)
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
				case c.home:
					orig = m
				case c.copyTo:
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
		// The next request starts in a conversation quiet for quietFor, as
		// a person's next task does: the report posted, the channel's
		// pacing slot free and the platform's burst allowance back.
		eventually(b, "the report", func() bool {
			for _, m := range r.slack.Messages() {
				if m.Channel == c.home && strings.Contains(m.Text, "finished:") && !m.Posted.Before(a.CreatedAt) {
					return true
				}
			}
			return false
		})
		for quiet := false; !quiet; {
			<-tick.C
			quiet = true
			for _, m := range r.slack.Messages() {
				if m.Channel == c.home || m.Channel == c.copyTo {
					quiet = quiet && time.Since(m.Posted) > quietFor && time.Since(m.Edited) > quietFor
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 0.5).Seconds()*1000, "p50-ms")
	b.ReportMetric(percentile(lat, 1).Seconds()*1000, "max-ms")
	b.ReportMetric(percentile(orig1, 0.5).Seconds()*1000, "home-p50-ms")
	b.ReportMetric(percentile(copy1, 0.5).Seconds()*1000, "copy-p50-ms")
	b.ReportMetric(float64(r.slack.Violations()), "violations")
}
