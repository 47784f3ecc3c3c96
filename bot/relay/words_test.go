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

// eventNames are the task log's event types: chat never shows them.
var eventNames = []string{"tool_refused", "tool_started", "tool_finished", "run_finished", "task_state", "final_report",
	"approval_requested", "approval_decided", "subagent_started", "subagent_finished", "fleet_updated", "plan_updated"}

// plainWords fails t where chat text shows a principal id, an event name
// or an empty code block.
func plainWords(t *testing.T, where, text string) {
	t.Helper()
	for _, bad := range append([]string{"slack:", "telegram:", "``````", "<pre></pre>"}, eventNames...) {
		if strings.Contains(text, bad) {
			t.Errorf("%s shows %q:\n%s", where, bad, text)
		}
	}
}

func TestChatNamesPeopleAndSaysWhyInSentences(t *testing.T) {
	r := newRig(t, func(req agenttest.Request) agenttest.Turn {
		if res := lastTool(req); res != "" {
			return agenttest.Turn{Text: "stopped: " + strings.TrimSpace(res)}
		}
		return toolTurn("c1", "bash", `{"command":"echo words > out.txt"}`)
	})
	r.slack.SetUser(bob, "bobby", "Bob Builder")

	// Bob denies the first task's call: the approval says who by name, the
	// report says which call was refused and what now.
	m1 := r.slack.Mention(alice, channel, "", "write the words")
	ap := r.approvalMessage(t, m1.TS)
	// The status message said "waiting for approval" before the buttons
	// were there to click.
	if st := r.slack.Thread(channel, m1.TS)[0]; !strings.Contains(st.Text, "— waiting for approval") || st.Edited.After(ap.Posted) {
		t.Errorf("status when the approval was posted (%s): %+v", ap.Posted, st)
	}
	// The request mentions the approvers who may act (not the requester).
	if !strings.Contains(ap.Text, "Asking: <@"+bob+">") || strings.Contains(ap.Text, "<@"+alice+">") {
		t.Errorf("approval request does not ask bob alone:\n%s", ap.Text)
	}
	id1 := r.taskOf(t, m1.TS)
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[len(ap.Buttons)-1].Value)
	runnertest.WaitState(t, r.svc, id1, 20*time.Second, store.StateBlocked, store.StateSucceeded, store.StateFailed)
	eventually(t, "the denial by name and the refusal in a sentence", func() bool {
		text := r.threadText(m1.TS)
		return strings.Contains(text, "Denied by bobby at") &&
			strings.Contains(text, "<@"+alice+">: The bash call “echo words &gt; out.txt” was declined by an approver. Reply in this thread")
	})
	plainWords(t, "the denied task's thread", r.threadText(m1.TS))

	// Bob allows the second: his name again, from the cache.
	m2 := r.slack.Mention(alice, channel, "", "write the words again")
	ap = r.approvalMessage(t, m2.TS)
	id2 := r.taskOf(t, m2.TS)
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, id2, 20*time.Second, store.StateSucceeded, store.StateBlocked, store.StateFailed)
	eventually(t, "the approval by name", func() bool { return strings.Contains(r.threadText(m2.TS), "Allowed once by bobby at") })
	plainWords(t, "the allowed task's thread", r.threadText(m2.TS))
	if n := r.slack.Lookups(bob); n != 1 {
		t.Errorf("users.info asked about bob %d times, want once", n)
	}
	// The 👀 on each request turned into its outcome.
	eventually(t, "the outcome reactions", func() bool {
		got := strings.Join(r.slack.Reactions(), " ")
		return strings.Contains(got, channel+"/"+m1.TS+"/x") && strings.Contains(got, channel+"/"+m2.TS+"/white_check_mark") &&
			!strings.Contains(got, "/eyes")
	})
	// The audit keeps the principal id.
	task, _ := r.svc.Task(t.Context(), id2)
	if task.Requester != "slack:T0FAKE/"+alice {
		t.Errorf("requester = %q", task.Requester)
	}
}

// A question needing no tool, in a Telegram private chat: 👀 on the
// question, "typing…" while the model works, then the answer as the one
// message, and 👍 on the question — no "queued" reply, no status message.
func TestTelegramQuickAnswerIsOneMessage(t *testing.T) {
	st := storetest.SQLite(t, store.Config{})
	prov := agenttest.NewScriptedProvider(agenttest.Turn{Text: "four, quickly"})
	fake := bottest.NewTelegram(t, "42:quick-token", bottest.SlackLimits{})
	tr, err := telegram.New(telegram.Config{Token: "42:quick-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{strconv.Itoa(tgAlice)}}}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: withBot(nil, cfg)})
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr}, ScanInterval: 50 * time.Millisecond,
		// Far longer than the answer takes even on a loaded machine: this
		// is about the quick answer, not the delay's length.
		StatusDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(ctx)
	})
	q := fake.Send(tgAlice, tgAlice, "what is 2+2?", 0)
	eventually(t, "👍 on the question", func() bool { return fake.Reaction(tgAlice, q) == "👍" })
	msgs := fake.Messages(tgAlice)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "four, quickly") || msgs[0].ReplyTo != strconv.FormatInt(q, 10) {
		t.Fatalf("messages = %+v, want the answer alone, replying to the question", msgs)
	}
	plainWords(t, "the answer", msgs[0].Text)
	if n := fake.Reacted(tgAlice, "👀"); n != 1 {
		t.Errorf("👀 set %d times, want once", n)
	}
	if a := fake.Actions(tgAlice); len(a) == 0 || a[0].Action != "typing" {
		t.Errorf("chat actions = %+v, want typing", a)
	}
}
