package relay_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
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

const (
	tgAlice = 111
	tgBob   = 222
	tgGroup = -100
)

func TestTelegramGroupMentionApprovalReport(t *testing.T) {
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, 20)
	for i := range turns {
		turns[i] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			for _, m := range req.Messages {
				if m.Role == agent.RoleTool {
					return agenttest.Turn{Text: "done: " + strings.TrimSpace(m.Content) + " <script> & <b>bold</b>"}
				}
			}
			return toolTurn("c1", "bash", `{"command":"echo tg-ran > out.txt && cat out.txt"}`)
		})
	}
	prov := agenttest.NewScriptedProvider(turns...)
	fake := bottest.NewTelegram(t, "42:secret-token", bottest.SlackLimits{})
	fake.SetName(tgBob, "Bob")
	tr, err := telegram.New(telegram.Config{Token: "42:secret-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(xs ...int64) []string {
		var out []string
		for _, x := range xs {
			out = append(out, strconv.FormatInt(x, 10))
		}
		return out
	}
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: ids(tgAlice, tgBob),
		AllowChats: ids(tgGroup), Approvers: ids(tgAlice, tgBob)}}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: withBot(nil, cfg)})
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		Secrets: []string{"42:secret-token"}, EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
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

	fake.Send(-200, tgAlice, "@reasonix_bot hello from a stranger group", 0)
	req := fake.Send(tgGroup, tgAlice, "@reasonix_bot check the proof", 0)
	var ap bottest.TelegramMessage
	eventually(t, "the approval buttons", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if len(m.Buttons) > 0 {
				ap = m
				return true
			}
		}
		return false
	})
	var status bottest.TelegramMessage
	for _, m := range fake.Messages(tgGroup) {
		if strings.Contains(m.Text, "<b>Task ") {
			status = m
		}
	}
	if status.ReplyTo != strconv.FormatInt(req, 10) || status.ParseMode != "HTML" {
		t.Errorf("status message = %+v", status)
	}
	id, err := st.ThreadTask(context.Background(), "telegram", strconv.Itoa(tgGroup), strconv.FormatInt(req, 10))
	if err != nil {
		t.Fatal(err)
	}
	if task, _ := svc.Task(context.Background(), id); task.Requester != "telegram:111" || task.Source != store.SourceTelegram {
		t.Fatalf("task = %+v", task)
	}

	// A reply to the bot's status message steers the task — the
	// requester's; anyone else's (an approver's too) is not passed on.
	fake.Send(tgGroup, tgBob, "and delete the tests", status.ID)
	eventually(t, "bob's refusal", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if strings.Contains(m.Text, "not passed on") {
				return true
			}
		}
		return false
	})
	fake.Send(tgGroup, tgAlice, "and say hi", status.ID)
	eventually(t, "the steer", func() bool { return len(runnertest.Events(t, svc, id, "message")) > 0 })

	fake.Click(tgGroup, tgAlice, ap.ID, ap.Buttons[0].Value) // the requester
	fake.Click(tgGroup, tgBob, ap.ID, "ap:a_forged:o")       // forged
	eventually(t, "two refusals", func() bool { return len(fake.Answers()) == 2 })
	for _, a := range fake.Answers() {
		if !strings.Contains(a.Text, "nothing changed") && !strings.Contains(a.Text, "You asked for this task") {
			t.Errorf("refusal = %+v", a)
		}
	}
	fake.Click(tgGroup, tgBob, ap.ID, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, svc, id, 30*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %+v", done.Result)
	}
	eventually(t, "the report", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if strings.Contains(m.Text, "done: tg-ran") {
				return strings.Contains(m.Text, "&lt;script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;")
			}
		}
		return false
	})
	// One status message, edited in place from start to end, as on Slack
	// (the report beside it is the answer): no separate "queued",
	// "running" or "done" messages.
	var statuses []bottest.TelegramMessage
	for _, m := range fake.Messages(tgGroup) {
		if strings.Contains(m.Text, "<b>Task ") && strings.Contains(m.Text, "</b> — ") { // the report is "<b>Task … done</b>"
			statuses = append(statuses, m)
		}
		if low := strings.ToLower(m.Text); strings.HasPrefix(low, "queued") || strings.HasPrefix(low, "running") {
			t.Errorf("a separate state message: %q", m.Text)
		}
	}
	if len(statuses) != 1 {
		t.Fatalf("%d status messages, want one edited in place: %+v", len(statuses), statuses)
	}
	eventually(t, "the status message edited to done", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if m.ID == status.ID {
				return m.Edits > 0 && strings.Contains(m.Text, "— done")
			}
		}
		return false
	})
	// The request asks Bob by name, linked so Telegram notifies him (his
	// name from one getChat: he had said nothing yet); the decision names
	// him again, without asking twice, and never by principal id.
	if want := `Asking: <a href="tg://user?id=222">Bob</a>`; !strings.Contains(ap.Text, want) {
		t.Errorf("approval request lacks %q:\n%s", want, ap.Text)
	}
	eventually(t, "the decision by name", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if m.ID == ap.ID {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "Allowed once by Bob at")
			}
		}
		return false
	})
	if n := fake.GetChats(tgBob); n > 1 {
		t.Errorf("getChat asked about bob %d times, want at most once", n)
	}
	for _, m := range fake.Messages(tgGroup) {
		if strings.Contains(m.Text, "telegram:") || strings.Contains(m.Text, "<pre></pre>") {
			t.Errorf("a message shows an id or an empty block: %q", m.Text)
		}
	}
	for _, e := range runnertest.Events(t, svc, id, "message") {
		if strings.Contains(string(e.Payload), "delete the tests") {
			t.Errorf("bob's reply reached the task: %s", e.Payload)
		}
	}
	if got := len(fake.Messages(-200)); got != 0 {
		t.Errorf("the stranger group got %d messages", got)
	}
	if n := fake.Violations(); n != 0 {
		t.Errorf("%d Telegram rate limit violations", n)
	}
	for _, m := range fake.Messages(tgGroup) {
		if strings.Contains(m.Text, "secret-token") {
			t.Errorf("the token was posted: %q", m.Text)
		}
	}
	// The offset is durable: every update handled is acknowledged in the store.
	eventually(t, "the offset to be saved", func() bool {
		v, _ := st.ChatCursor(context.Background(), "telegram:offset")
		return v > 0 && v == fake.Confirmed()
	})
}

// On Telegram too: a task started in Alice's private chat asks where no
// approver sees it; the request, mentioning Bob by id, also reaches Bob's
// private chat with its buttons, and his click there decides and edits
// both messages.
func TestTelegramPrivateChatApprovalReachesTheApprover(t *testing.T) {
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, 20)
	for i := range turns {
		turns[i] = agenttest.Respond(approvalScript)
	}
	fake := bottest.NewTelegram(t, "42:secret-token", bottest.SlackLimits{})
	fake.SetName(tgBob, "Bob")
	tr, err := telegram.New(telegram.Config{Token: "42:secret-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111", "222"},
		AllowChats: []string{"-100"}, Approvers: []string{"222"}}}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: agenttest.NewScriptedProvider(turns...), Settings: withBot(nil, cfg)})
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
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
	fake.Send(tgAlice, tgAlice, "touch a file from my private chat", 0)
	withButtons := func(chat int64) (bottest.TelegramMessage, bool) {
		for _, m := range fake.Messages(chat) {
			if len(m.Buttons) > 0 {
				return m, true
			}
		}
		return bottest.TelegramMessage{}, false
	}
	var orig, cp bottest.TelegramMessage
	eventually(t, "the request and its copy", func() bool {
		var ok1, ok2 bool
		orig, ok1 = withButtons(tgAlice)
		cp, ok2 = withButtons(tgBob)
		return ok1 && ok2
	})
	if !strings.Contains(orig.Text, `<a href="tg://user?id=222">Bob</a>`) {
		t.Errorf("the request does not mention Bob by id: %q", orig.Text)
	}
	fake.Click(tgBob, tgBob, cp.ID, cp.Buttons[0].Value)
	eventually(t, "both messages to show the decision", func() bool {
		var o, c bottest.TelegramMessage
		for _, m := range fake.Messages(tgAlice) {
			if m.ID == orig.ID {
				o = m
			}
		}
		for _, m := range fake.Messages(tgBob) {
			if m.ID == cp.ID {
				c = m
			}
		}
		return len(o.Buttons) == 0 && len(c.Buttons) == 0 && strings.Contains(o.Text, "Allowed once by Bob") && strings.Contains(c.Text, "Allowed once by Bob")
	})
}
