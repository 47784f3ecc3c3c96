package relay_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// buttonsIn waits for a message with buttons in channel ch and returns it.
func (r *rig) buttonsIn(t testing.TB, ch string) bottest.SlackMessage {
	t.Helper()
	var msg bottest.SlackMessage
	eventually(t, "an approval message with buttons in "+ch, func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == ch && len(m.Buttons) > 0 {
				msg = m
				return true
			}
		}
		return false
	})
	return msg
}

// message is message ts as the fake holds it now.
func (r *rig) message(ts string) bottest.SlackMessage {
	for _, m := range r.slack.Messages() {
		if m.TS == ts {
			return m
		}
	}
	return bottest.SlackMessage{}
}

// A task started in a direct message asks where no approver sees it: the
// request is also posted, with its buttons, in each approver's own direct
// message with the bot (never the requester's second copy, never a
// non-approver's). The requester's click is told it is their own task;
// the approver's click in their DM decides, and both messages are edited
// to the decision.
func TestDMApprovalReachesAnApproversDM(t *testing.T) {
	r := newRig(t, approvalScript)
	const aliceDM = "DALI"
	r.slack.DM(alice, aliceDM, "touch a file from my DM")
	orig := r.buttonsIn(t, aliceDM)
	cp := r.buttonsIn(t, bottest.DMChannel(bob))
	if !strings.Contains(cp.Text, "Asked in a direct message with "+bottest.SlackRealName(alice)) || !strings.Contains(cp.Text, "echo ran") {
		t.Errorf("the copy reads %q", cp.Text)
	}
	if len(cp.Buttons) != len(orig.Buttons) {
		t.Errorf("copy buttons %+v, original %+v", cp.Buttons, orig.Buttons)
	}
	if !strings.Contains(orig.Text, "<@"+bob+">") || strings.Contains(orig.Text, "<@"+alice+">") {
		t.Errorf("the request mentions the wrong people: %q", orig.Text)
	}
	for _, m := range r.slack.Messages() {
		if m.Channel == bottest.DMChannel(mallory) || m.Channel == bottest.DMChannel(alice) {
			t.Errorf("a copy went to %s: %q", m.Channel, m.Text)
		}
	}

	r.slack.Click(alice, aliceDM, orig.TS, orig.Buttons[0].Value)
	eventually(t, "the requester's answer", func() bool { return len(r.ephemeralFor(alice)) == 1 })
	if got := r.ephemeralFor(alice)[0]; got != "You asked for this task; another approver must decide. Nothing changed." {
		t.Errorf("the requester's click was answered %q", got)
	}
	// A copy's button works only on the copy: clicked as if in another
	// conversation it is refused.
	r.slack.Click(bob, "C0OTHER", cp.TS, cp.Buttons[0].Value)
	eventually(t, "the misplaced click's answer", func() bool { return len(r.ephemeralFor(bob)) == 1 })

	r.slack.Click(bob, bottest.DMChannel(bob), cp.TS, cp.Buttons[0].Value)
	tasks := r.tasksWithPrompt(t, "touch a file from my DM")
	if len(tasks) != 1 {
		t.Fatalf("tasks = %+v", tasks)
	}
	id := tasks[0].ID
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	decided := "Allowed once by " + bottest.SlackRealName(bob)
	eventually(t, "both copies to show the decision", func() bool {
		o, c := r.message(orig.TS), r.message(cp.TS)
		return len(o.Buttons) == 0 && len(c.Buttons) == 0 && strings.Contains(o.Text, decided) && strings.Contains(c.Text, decided)
	})
	if n := len(runnertest.Events(t, r.svc, id, "approval_decided")); n != 1 {
		t.Errorf("%d decisions, want 1", n)
	}
}

// With [bot] approvals_channel set, the copy of a request asked in a DM
// goes there instead of to each approver, mentioning them; a click there
// decides, and the request in the DM shows it.
func TestDMApprovalGoesToTheApprovalsChannel(t *testing.T) {
	const approvals = "C0APPR"
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel, approvals}, Approvers: []string{alice, bob}}, ApprovalsChannel: "slack:" + approvals}
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 120 * time.Millisecond, bot: &b})
	r.slack.DM(alice, "DALI", "touch a file, approved in the channel")
	orig := r.buttonsIn(t, "DALI")
	cp := r.buttonsIn(t, approvals)
	if !strings.Contains(cp.Text, "<@"+bob+">") {
		t.Errorf("the copy does not mention the approver: %q", cp.Text)
	}
	for _, m := range r.slack.Messages() {
		if strings.HasPrefix(m.Channel, "D") && m.Channel != "DALI" {
			t.Errorf("a copy went to a DM (%s) though an approvals channel is set", m.Channel)
		}
	}
	r.slack.Click(bob, approvals, cp.TS, cp.Buttons[len(cp.Buttons)-1].Value) // Deny
	eventually(t, "both messages to show the denial", func() bool {
		o, c := r.message(orig.TS), r.message(cp.TS)
		return len(o.Buttons) == 0 && len(c.Buttons) == 0 && strings.Contains(o.Text, "Denied by") && strings.Contains(c.Text, "Denied by")
	})
}

// A request asked in a channel stays there: no copies.
func TestChannelApprovalIsNotCopied(t *testing.T) {
	r := newRig(t, approvalScript)
	m := r.slack.Mention(alice, channel, "", "touch a file in the channel")
	ap := r.approvalMessage(t, m.TS)
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, r.taskOf(t, m.TS), 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	for _, msg := range r.slack.Messages() {
		if msg.Channel != channel {
			t.Errorf("a message went to %s: %q", msg.Channel, msg.Text)
		}
	}
}

// An approval nobody answers is reminded of once, at half its deadline,
// in the thread, mentioning the approvers again; the relay's clock is the
// test's, moved past the halfway mark.
func TestUnansweredApprovalIsRemindedOnce(t *testing.T) {
	var ahead atomic.Int64
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 120 * time.Millisecond, tune: func(c *relay.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
		c.RefreshInterval = 50 * time.Millisecond
	}})
	m := r.slack.Mention(alice, channel, "", "wait for a reminder")
	ap := r.approvalMessage(t, m.TS)
	reminders := func() []bottest.SlackMessage {
		var out []bottest.SlackMessage
		for _, msg := range r.slack.Thread(channel, m.TS) {
			if strings.Contains(msg.Text, "Still waiting for a decision") {
				out = append(out, msg)
			}
		}
		return out
	}
	settle(t, r.relay, false)
	if n := len(reminders()); n != 0 {
		t.Fatalf("%d reminders before half the deadline", n)
	}
	ahead.Store(int64(16 * time.Minute)) // the default deadline is 30 minutes away
	eventually(t, "the reminder", func() bool { return len(reminders()) == 1 })
	got := reminders()[0]
	if !strings.Contains(got.Text, "<@"+bob+">") || !strings.Contains(got.Text, "bash") || !strings.Contains(got.Text, "no answer means deny") {
		t.Errorf("the reminder reads %q", got.Text)
	}
	ahead.Store(int64(20 * time.Minute))
	settle(t, r.relay, false)
	if n := len(reminders()); n != 1 {
		t.Errorf("%d reminders, want 1", n)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, r.taskOf(t, m.TS), 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
}

// A task from the API that names a chat target and ends before the relay
// looks (here: the first relay scans only at its start, and the second
// starts after the task ended) is still posted — its report once, however
// often the relay looks again.
func TestTaskEndedBeforeTheScanIsStillPosted(t *testing.T) {
	r := newRigOpts(t, rigOpts{model: func(agenttest.Request) agenttest.Turn { return agenttest.Turn{Text: "quick-answer-42"} },
		editInterval: 50 * time.Millisecond, tune: func(c *relay.Config) { c.ScanInterval = time.Hour }})
	ctx := context.Background()
	eventually(t, "the first relay's only scan", func() bool { s, _ := r.relay.Passes(); return s >= 1 })
	task, _, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "answer quickly",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel}}})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, task.ID, 20*time.Second, store.StateSucceeded)
	if n := len(r.slack.Messages()); n != 0 {
		t.Fatalf("%d messages before any scan saw the task", n)
	}
	tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: r.slack.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel}, Approvers: []string{alice, bob}}}
	second, err := relay.New(relay.Config{Service: r.svc, Store: r.st, Bot: b, Transports: []bot.Transport{tr},
		EditInterval: 50 * time.Millisecond, ScanInterval: 50 * time.Millisecond, Node: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = second.Stop(sctx)
	})
	reports := func() int {
		n := 0
		for _, m := range r.slack.Messages() {
			if strings.Contains(m.Text, "quick-answer-42") {
				n++
			}
		}
		return n
	}
	eventually(t, "the ended task's report", func() bool { return reports() == 1 })
	settle(t, second, false)
	settle(t, second, false)
	if n := reports(); n != 1 {
		t.Errorf("the report was posted %d times", n)
	}
	if _, err := r.st.ChatPost(ctx, task.ID, "status"); err != nil {
		t.Errorf("no status message recorded: %v", err)
	}
}

// A running task silent for stall_after (the relay's clock moved past it)
// says so once in its thread, naming the last step, with a Cancel button;
// someone else's click is refused, the requester's cancels the task.
func TestStalledTaskPostsOnceWithCancel(t *testing.T) {
	var ahead atomic.Int64
	model := func(req agenttest.Request) agenttest.Turn {
		if res := lastTool(req); res != "" {
			return agenttest.Turn{Text: "thinking forever", Stall: true}
		}
		return toolTurn("c1", "read_file", `{"path":"README.md"}`)
	}
	r := newRigOpts(t, rigOpts{model: model, editInterval: 50 * time.Millisecond, tune: func(c *relay.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
		c.RefreshInterval = 50 * time.Millisecond
	}})
	m := r.slack.Mention(alice, channel, "", "read and then hang")
	id := r.taskOf(t, m.TS)
	eventually(t, "the model's second turn", func() bool { return len(r.model.Requests()) >= 2 })
	stalls := func() []bottest.SlackMessage {
		var out []bottest.SlackMessage
		for _, msg := range r.slack.Thread(channel, m.TS) {
			if strings.Contains(msg.Text, "No progress for") {
				out = append(out, msg)
			}
		}
		return out
	}
	// The relay's clock jumps below, but the runner stamps events with
	// the real one: an event of the second turn written after the jump
	// would look 11 minutes old and start a second silence. Jump only once
	// the task has written all it will write before the model hangs.
	lastSeq := func() int64 {
		evs, err := r.svc.Events(context.Background(), id, 0, 10000)
		if err != nil || len(evs) == 0 {
			return -1
		}
		return evs[len(evs)-1].Seq
	}
	for quiet := 0; quiet < 2; {
		before := lastSeq()
		settle(t, r.relay, false)
		if lastSeq() == before {
			quiet++
		} else {
			quiet = 0
		}
	}
	if n := len(stalls()); n != 0 {
		t.Fatalf("%d stall notices before stall_after", n)
	}
	ahead.Store(int64(11 * time.Minute))
	eventually(t, "the stall notice", func() bool { return len(stalls()) == 1 })
	settle(t, r.relay, false)
	st := stalls()
	if len(st) != 1 {
		t.Fatalf("%d stall notices, want 1", len(st))
	}
	if !strings.Contains(st[0].Text, "No progress for 11 min") || !strings.Contains(st[0].Text, "last step: read_file README.md") ||
		len(st[0].Buttons) != 1 || st[0].Buttons[0].Label != "Cancel task" {
		t.Fatalf("the stall notice: %+v", st[0])
	}
	r.slack.Click(mallory, channel, st[0].TS, st[0].Buttons[0].Value)
	eventually(t, "mallory's answer", func() bool { return len(r.ephemeralFor(mallory)) == 1 })
	if got := r.ephemeralFor(mallory)[0]; !strings.Contains(got, "only its requester or an admin") {
		t.Errorf("mallory's click was answered %q", got)
	}
	if task, _ := r.svc.Task(context.Background(), id); task.State.Terminal() {
		t.Fatalf("a refused click ended the task: %s", task.State)
	}
	r.slack.Click(alice, channel, st[0].TS, st[0].Buttons[0].Value)
	if got := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateCancelled, store.StateSucceeded, store.StateFailed); got.State != store.StateCancelled {
		t.Fatalf("task = %s", got.State)
	}
}

// A schedule that paused itself after a failed run is announced once in
// its notify channel and in [bot] alerts_channel, however often the relay
// looks again.
func TestPausedScheduleIsAnnounced(t *testing.T) {
	const alerts = "C0ALERT"
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "@yearly", Prompt: "tidy up", Posture: "ask", Overlap: "skip",
		CatchUp: "none", MaxFailures: 1, Notify: []config.NotifyTarget{{Transport: "slack", Channel: channel}}}}
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob},
		AllowChannels: []string{channel}, Approvers: []string{bob}}, AlertsChannel: "slack:" + alerts}
	r := newRigOpts(t, rigOpts{set: set, bot: &b, editInterval: 50 * time.Millisecond,
		model: func(agenttest.Request) agenttest.Turn {
			return agenttest.Turn{Status: 400, ErrorMessage: "bad request"}
		}})
	ctx := context.Background()
	task, err := r.svc.RunSchedule(ctx, runner.Principal{ID: "token:root", Role: store.RoleAdmin}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, task.ID, 20*time.Second, store.StateFailed)
	announced := func(ch string) int {
		n := 0
		for _, m := range r.slack.Messages() {
			if m.Channel == ch && m.ThreadTS == "" && strings.Contains(m.Text, "Schedule nightly is paused after 1 failed runs") {
				n++
			}
		}
		return n
	}
	eventually(t, "the announcements", func() bool { return announced(channel) == 1 && announced(alerts) == 1 })
	settle(t, r.relay, false)
	if a, b := announced(channel), announced(alerts); a != 1 || b != 1 {
		t.Errorf("announced %d times in the notify channel and %d in the alerts channel, want once each", a, b)
	}
}

// A schedule occurrence dropped for being late (the service was down,
// catch_up none) is announced once, in the notify channel and the alerts
// channel; the next run ends the matter.
func TestMissedScheduleIsAnnounced(t *testing.T) {
	const alerts = "C0ALERT"
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "@yearly", Prompt: "tidy up", Posture: "ask",
		CatchUp: "none", Notify: []config.NotifyTarget{{Transport: "slack", Channel: channel}}}}
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob},
		AllowChannels: []string{channel}, Approvers: []string{bob}}, AlertsChannel: "slack:" + alerts}
	r := newRigOpts(t, rigOpts{set: set, bot: &b, editInterval: 50 * time.Millisecond,
		model: func(agenttest.Request) agenttest.Turn { return agenttest.Turn{Text: "tidy"} }})
	ctx := context.Background()
	task, err := r.svc.RunSchedule(ctx, runner.Principal{ID: "token:root", Role: store.RoleAdmin}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, task.ID, 20*time.Second, store.StateSucceeded)
	announced := func(ch string) int {
		n := 0
		for _, m := range r.slack.Messages() {
			if m.Channel == ch && m.ThreadTS == "" && strings.Contains(m.Text, "Schedule nightly did not run when due") {
				n++
			}
		}
		return n
	}
	settle(t, r.relay, false)
	if a, b := announced(channel), announced(alerts); a != 0 || b != 0 {
		t.Fatalf("announced a miss before any: %d, %d", a, b)
	}
	// The loop dropped a late occurrence, as after a restart.
	st, err := r.st.Schedule(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.st.AdvanceSchedule(ctx, "nightly", st.Anchor, time.Now().Add(time.Minute), store.PassMissed); err != nil || !ok {
		t.Fatalf("drop an occurrence: %v %v", ok, err)
	}
	eventually(t, "the announcements", func() bool { return announced(channel) == 1 && announced(alerts) == 1 })
	settle(t, r.relay, false)
	if a, b := announced(channel), announced(alerts); a != 1 || b != 1 {
		t.Errorf("announced %d times in the notify channel and %d in the alerts channel, want once each", a, b)
	}
}

// A route's approval_ttl sets how long its tasks' requests wait, and the
// reminder comes at half of it.
func TestRouteApprovalTTL(t *testing.T) {
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob},
		AllowChannels: []string{channel}, Approvers: []string{bob}},
		Routes: []config.BotRoute{{Transport: "slack", Channel: channel, Posture: "ask", ApprovalTTL: config.TTL(3 * time.Hour)}}}
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 50 * time.Millisecond, bot: &b})
	m := r.slack.Mention(alice, channel, "", "wait three hours")
	ap := r.approvalMessage(t, m.TS)
	list, err := r.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: r.taskOf(t, m.TS)})
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals = %+v, %v", list, err)
	}
	if d := list[0].ExpiresAt.Sub(list[0].CreatedAt); d < 3*time.Hour-time.Second || d > 3*time.Hour {
		t.Errorf("the request waits %s, want the route's 3h", d)
	}
	if want := list[0].ExpiresAt.UTC().Format("15:04 MST"); !strings.Contains(ap.Text, "expires "+want) {
		t.Errorf("the request does not show its deadline %s: %q", want, ap.Text)
	}
}

// A task from the API relayed to a channel asks its approvers there by
// mention, though it has no Slack team of its own.
func TestAPITaskApprovalMentionsTheApprovers(t *testing.T) {
	r := newRig(t, approvalScript)
	task, _, err := r.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root",
		Prompt: "touch a file for the API", Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel}}})
	if err != nil {
		t.Fatal(err)
	}
	root := r.statusRoot(t, channel)
	ap := r.approvalMessage(t, root.TS)
	if !strings.Contains(ap.Text, "Asking: <@"+alice+">, <@"+bob+">") {
		t.Errorf("the request does not ask the approvers: %q", ap.Text)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, task.ID, 20*time.Second, store.StateSucceeded)
}
