package relay_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// With approval_ttl = "none" a request has no deadline: the request says
// so, a sweep however late expires nothing, and it is reminded of every
// [bot] approval_remind — in the thread, again and again, each reminder
// once, a restarted relay continuing the series without repeating one —
// until it is decided; then the reminders stop. The relay's clock is the
// test's, moved past each mark.
func TestApprovalWithoutDeadlineIsRemindedUntilDecided(t *testing.T) {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Runner.ApprovalTTL = config.NoTTL
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel}, Approvers: []string{alice, bob}}, ApprovalRemind: time.Hour}
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	tune := func(c *relay.Config) { c.Now, c.RefreshInterval = now, 50*time.Millisecond }
	r := newRigOpts(t, rigOpts{set: set, bot: &b, model: approvalScript, editInterval: 50 * time.Millisecond, tune: tune})
	m := r.slack.Mention(alice, channel, "", "wait as long as it takes")
	ap := r.approvalMessage(t, m.TS)
	if !strings.Contains(ap.Text, "no deadline") || strings.Contains(ap.Text, "expires") {
		t.Errorf("the request does not say it has no deadline: %q", ap.Text)
	}
	id := r.taskOf(t, m.TS)
	list, err := r.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: id})
	if err != nil || len(list) != 1 || !list[0].NoDeadline() {
		t.Fatalf("approvals = %+v, %v", list, err)
	}
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
		t.Fatalf("%d reminders before approval_remind passed", n)
	}

	ahead.Store(int64(61 * time.Minute))
	eventually(t, "the first reminder", func() bool { return len(reminders()) == 1 })
	got := reminders()[0].Text
	if !strings.Contains(got, "no deadline") || !strings.Contains(got, "<@"+bob+">") || strings.Contains(got, "means deny") {
		t.Errorf("the reminder reads %q", got)
	}
	ahead.Store(int64(100 * time.Minute)) // less than approval_remind after the first
	settle(t, r.relay, false)
	if n := len(reminders()); n != 1 {
		t.Fatalf("%d reminders 39 minutes after the first, want 1", n)
	}
	ahead.Store(int64(122 * time.Minute))
	eventually(t, "the second reminder", func() bool { return len(reminders()) == 2 })

	// A restart: the new relay replays the task and finds the series where
	// it was — no reminder again now, the next one an hour after the last.
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.relay.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: r.slack.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	rc := relay.Config{Service: r.svc, Store: r.st, Bot: b, Transports: []bot.Transport{tr},
		EditInterval: 50 * time.Millisecond, ScanInterval: 50 * time.Millisecond}
	tune(&rc)
	again, err := relay.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := again.Stop(ctx); err != nil {
			t.Errorf("relay stop: %v", err)
		}
	})
	settle(t, again, false)
	if n := len(reminders()); n != 2 {
		t.Fatalf("%d reminders after the restart, want still 2", n)
	}
	ahead.Store(int64(183 * time.Minute))
	eventually(t, "the third reminder, from the restarted relay", func() bool { return len(reminders()) == 3 })

	// However late the expiry sweep runs, the request waits.
	if expired, err := r.st.ExpireApprovals(context.Background(), time.Now().Add(1000*time.Hour)); err != nil || len(expired) != 0 {
		t.Fatalf("a sweep 1000 hours on expired %+v, %v", expired, err)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	eventually(t, "the request to show the decision", func() bool {
		msg := r.message(ap.TS)
		return len(msg.Buttons) == 0 && strings.Contains(msg.Text, "Allowed once by")
	})
	ahead.Store(int64(400 * time.Minute))
	settle(t, again, false)
	if n := len(reminders()); n != 3 {
		t.Errorf("%d reminders after the decision, want 3", n)
	}
}
