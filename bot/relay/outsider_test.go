package relay_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// A request asked in a channel one of its approvers is not in reaches
// that approver's direct message, with the buttons; an approver who is a
// member gets no copy. Membership is read through conversations.members,
// page after page (the fake lists two members a page, the approver who
// is in being on the second), once for the channel. The outsider's click
// in their DM decides, and both messages show the decision.
func TestChannelApprovalReachesAnApproverNotInIt(t *testing.T) {
	const carol, dave, eve = "UCAROL", "UDAVE", "UEVE"
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, carol},
		AllowChannels: []string{channel}, Approvers: []string{bob, carol}}}
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 50 * time.Millisecond, bot: &b})
	r.slack.SetMembers(channel, alice, mallory, dave, carol, eve) // not bob
	m := r.slack.Mention(alice, channel, "", "touch a file where bob is not")
	orig := r.approvalMessage(t, m.TS)
	cp := r.buttonsIn(t, bottest.DMChannel(bob))
	if !strings.Contains(cp.Text, "echo ran") || !strings.Contains(cp.Text, "in a channel an approver is not in") {
		t.Errorf("the copy reads %q", cp.Text)
	}
	if len(cp.Buttons) != len(orig.Buttons) {
		t.Errorf("copy buttons %+v, original %+v", cp.Buttons, orig.Buttons)
	}
	if n := r.slack.MemberReads(channel); n != 3 {
		t.Errorf("%d conversations.members calls, want 3 (five members, two a page)", n)
	}

	r.slack.Click(bob, bottest.DMChannel(bob), cp.TS, cp.Buttons[0].Value)
	id := r.taskOf(t, m.TS)
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	decided := "Allowed once by " + bottest.SlackRealName(bob)
	eventually(t, "both messages to show the decision", func() bool {
		o, c := r.message(orig.TS), r.message(cp.TS)
		return len(o.Buttons) == 0 && len(c.Buttons) == 0 && strings.Contains(o.Text, decided) && strings.Contains(c.Text, decided)
	})
	for _, msg := range r.slack.Messages() {
		if msg.Channel != channel && msg.Channel != bottest.DMChannel(bob) {
			t.Errorf("a message went to %s (carol is in the channel): %q", msg.Channel, msg.Text)
		}
	}
	if n := r.slack.MemberReads(channel); n != 3 {
		t.Errorf("%d conversations.members calls after the task, want still 3 (cached)", n)
	}
}

// On Telegram a group's membership is getChatMember's status: an approver
// who left the group (or was never in it) gets the request in their
// private chat with the bot and decides it there; one who is a member
// gets no copy.
func TestTelegramGroupApprovalReachesAnApproverWhoLeft(t *testing.T) {
	const tgCarol = 333
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, 20)
	for i := range turns {
		turns[i] = agenttest.Respond(approvalScript)
	}
	prov := agenttest.NewScriptedProvider(turns...)
	fake := bottest.NewTelegram(t, "42:secret-token", bottest.SlackLimits{PerSecond: 10, Burst: 5})
	tr, err := telegram.New(telegram.Config{Token: "42:secret-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	id := func(x int64) string { return strconv.FormatInt(x, 10) }
	group := id(tgGroup)
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{id(tgAlice), id(tgBob), id(tgCarol)},
		AllowChats: []string{group}, Approvers: []string{id(tgBob), id(tgCarol)}}}
	fake.SetChatMember(group, tgBob, "left")
	fake.SetChatMember(group, tgCarol, "administrator")
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: withBot(nil, cfg)})
	rl, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		Secrets: []string{"42:secret-token"}, EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rl.Stop(ctx)
	})

	fake.Send(tgGroup, tgAlice, "@reasonix_bot touch a file where bob is not", 0)
	withButtons := func(chat int64) (bottest.TelegramMessage, bool) {
		for _, m := range fake.Messages(chat) {
			if len(m.Buttons) > 0 {
				return m, true
			}
		}
		return bottest.TelegramMessage{}, false
	}
	var orig, cp bottest.TelegramMessage
	eventually(t, "the request in the group and its copy in bob's chat", func() bool {
		var ok1, ok2 bool
		orig, ok1 = withButtons(tgGroup)
		cp, ok2 = withButtons(tgBob)
		return ok1 && ok2
	})
	if !strings.Contains(cp.Text, "in a channel an approver is not in") {
		t.Errorf("the copy reads %q", cp.Text)
	}
	if fake.MemberAsks(group, tgBob) != 1 || fake.MemberAsks(group, tgCarol) != 1 {
		t.Errorf("getChatMember asked %d times of bob, %d of carol; want once each", fake.MemberAsks(group, tgBob), fake.MemberAsks(group, tgCarol))
	}
	if msgs := fake.Messages(tgCarol); len(msgs) != 0 {
		t.Errorf("carol, a member, got %d messages: %+v", len(msgs), msgs)
	}
	now := func(chat, msg int64) bottest.TelegramMessage {
		for _, m := range fake.Messages(chat) {
			if m.ID == msg {
				return m
			}
		}
		return bottest.TelegramMessage{}
	}
	fake.Click(tgBob, tgBob, cp.ID, cp.Buttons[0].Value)
	eventually(t, "both messages to show the decision", func() bool {
		o, c := now(tgGroup, orig.ID), now(tgBob, cp.ID)
		return len(o.Buttons) == 0 && len(c.Buttons) == 0 && strings.Contains(o.Text, "Allowed once by") && strings.Contains(c.Text, "Allowed once by")
	})
}
