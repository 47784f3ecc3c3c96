package relay_test

import (
	"cmp"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/config"
	ev "reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

const (
	alice   = "UALICE" // allowed, the requester
	bob     = "UBOB"   // allowed, an approver
	mallory = "UMAL"   // allowed, not an approver
	eve     = "UEVE"   // not allowed at all
	channel = "C0DEV"
)

// eventually polls cond until it holds or the test fails after 20s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ev.True(t, 20*time.Second, cond, "timed out waiting for %s", what)
}

type rig struct {
	svc   *runner.Service
	st    *store.Store
	slack *bottest.Slack
	relay *relay.Relay
	model *agenttest.ScriptedProvider
}

// newRig runs a real service with a scripted model, a fake Slack and the
// relay between them.
func newRig(t *testing.T, model func(agenttest.Request) agenttest.Turn) *rig {
	return newRigWith(t, nil, model)
}

func newRigWith(t testing.TB, set *config.Config, model func(agenttest.Request) agenttest.Turn) *rig {
	return newRigOpts(t, rigOpts{set: set, model: model, editInterval: 120 * time.Millisecond})
}

// rigOpts shape a rig beyond its model. A zero editInterval is the relay's
// default pacing (1s); limits default to a lenient fake.
type rigOpts struct {
	set          *config.Config
	model        func(agenttest.Request) agenttest.Turn
	editInterval time.Duration
	limits       bottest.SlackLimits
	tune         func(*relay.Config)
	bot          *config.Bot // default: alice, bob and mallory in channel and C0OTHER; alice and bob approve
	turns        int         // model turns scripted; default 50
}

// withBot is set (nil: the test default) with [bot] table b: the service
// and the relay read the same table, as `reasonix serve` gives them.
func withBot(set *config.Config, b config.Bot) *config.Config {
	if set == nil {
		set = config.Default()
		set.Runner.MaxConcurrentTasks = 2
	}
	set.Bot = b
	return set
}

func newRigOpts(t testing.TB, o rigOpts) *rig {
	t.Helper()
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, cmp.Or(o.turns, 50))
	for i := range turns {
		turns[i] = agenttest.Respond(o.model)
	}
	prov := agenttest.NewScriptedProvider(turns...)
	cfg := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel, "C0OTHER"}, Approvers: []string{alice, bob}}}
	if o.bot != nil {
		cfg = *o.bot
	}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: withBot(o.set, cfg)})
	if o.limits == (bottest.SlackLimits{}) {
		o.limits = bottest.SlackLimits{PerSecond: 10, Burst: 3}
	}
	fake := bottest.NewSlack(t, o.limits)
	tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	rc := relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		Secrets: []string{"xoxb-test-secret"}, EditInterval: o.editInterval, ScanInterval: 50 * time.Millisecond}
	if o.tune != nil {
		o.tune(&rc)
	}
	r, err := relay.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Stop(ctx); err != nil {
			t.Errorf("relay stop: %v", err)
		}
	})
	return &rig{svc: svc, st: st, slack: fake, relay: r, model: prov}
}

func lastTool(req agenttest.Request) string {
	m := req.Messages[len(req.Messages)-1]
	if m.Role != agent.RoleTool {
		return ""
	}
	return m.Content
}

func toolTurn(id, name, args string) agenttest.Turn {
	return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: id, Name: name, Arguments: args}}, Usage: agent.Usage{Prompt: 100, Completion: 10}}
}

// approvalMessage waits for the message with buttons in thread.
func (r *rig) approvalMessage(t testing.TB, thread string) bottest.SlackMessage {
	t.Helper()
	var msg bottest.SlackMessage
	eventually(t, "an approval message with buttons", func() bool {
		for _, m := range r.slack.Thread(channel, thread) {
			if len(m.Buttons) > 0 {
				msg = m
				return true
			}
		}
		return false
	})
	return msg
}

func (r *rig) threadText(thread string) string {
	var b strings.Builder
	for _, m := range r.slack.Thread(channel, thread) {
		b.WriteString(m.Text + "\n---\n")
	}
	return b.String()
}

func (r *rig) ephemeralFor(user string) []string {
	var out []string
	for _, e := range r.slack.Ephemerals() {
		if e.User == user {
			out = append(out, e.Text)
		}
	}
	return out
}

func TestMentionApprovalAndReportInTheThread(t *testing.T) {
	r := newRig(t, func(req agenttest.Request) agenttest.Turn {
		if res := lastTool(req); res != "" {
			return agenttest.Turn{Text: "result: " + strings.TrimSpace(res) + " <!channel> <@U999> xoxb-test-secret", Usage: agent.Usage{Prompt: 120, Completion: 20}}
		}
		return toolTurn("c1", "bash", `{"command":"echo approved-run > proof.txt && cat proof.txt"}`)
	})
	mention := r.slack.Mention(alice, channel, "", "check the proof file")

	eventually(t, "the eyes reaction", func() bool {
		for _, x := range r.slack.Reactions() {
			if x == channel+"/"+mention.TS+"/eyes" {
				return true
			}
		}
		return false
	})
	ap := r.approvalMessage(t, mention.TS)
	if !strings.Contains(ap.Text, "echo approved-run") || len(ap.Buttons) < 2 {
		t.Fatalf("approval message = %+v", ap)
	}
	taskID, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
	if err != nil {
		t.Fatal(err)
	}
	// The approval is posted from its event, which the runner logs just
	// before it parks the task: wait for the state rather than race it.
	task := runnertest.WaitState(t, r.svc, taskID, 10*time.Second, store.StateWaitingApproval)
	if task.Source != store.SourceSlack || task.Requester != "slack:"+bottest.SlackTeam+"/"+alice || task.State != store.StateWaitingApproval {
		t.Fatalf("task = %+v", task)
	}
	allow := ap.Buttons[0].Value

	// Refused clicks change nothing and get an answer only the clicker sees.
	r.slack.Click(alice, channel, ap.TS, allow)                           // the requester
	r.slack.Click(mallory, channel, ap.TS, allow)                         // not an approver
	r.slack.Click(bob, "C0OTHER", ap.TS, allow)                           // from elsewhere
	r.slack.Click(bob, channel, ap.TS, "ap:a_FORGED000000000000000000:o") // forged
	eventually(t, "four refusals", func() bool {
		return len(r.ephemeralFor(alice)) == 1 && len(r.ephemeralFor(mallory)) == 1 && len(r.ephemeralFor(bob)) == 2
	})
	if got := r.ephemeralFor(alice)[0]; !strings.Contains(got, "You asked for this task; another approver must decide") {
		t.Errorf("requester's answer = %q", got)
	}
	if got := r.ephemeralFor(mallory)[0]; !strings.Contains(got, "approvers") {
		t.Errorf("non-approver's answer = %q", got)
	}
	if pend, _ := r.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: taskID, State: store.ApprovalPending}); len(pend) != 1 {
		t.Fatalf("after refused clicks, pending = %+v", pend)
	}

	r.slack.Click(bob, channel, ap.TS, allow)
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !strings.Contains(done.Result.FinalAnswer, "approved-run") {
		t.Fatalf("task = %+v", done.Result)
	}
	eventually(t, "the final report", func() bool { return strings.Contains(r.threadText(mention.TS), "result: approved-run") })
	// The report labels the time the way the CLI and the dashboard do: it
	// ran, and it waited for bob.
	if !regexp.MustCompile(` · ran [0-9hms]+ · waited [0-9hms]+ for approval`).MatchString(r.threadText(mention.TS)) {
		t.Errorf("the final report does not split the time:\n%s", r.threadText(mention.TS))
	}
	eventually(t, "the approval message to show the decision", func() bool {
		for _, m := range r.slack.Thread(channel, mention.TS) {
			if m.TS == ap.TS {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "Allowed once by "+bottest.SlackRealName(bob))
			}
		}
		return false
	})
	eventually(t, "the status message to say done", func() bool {
		msgs := r.slack.Thread(channel, mention.TS)
		return len(msgs) > 0 && strings.Contains(msgs[0].Text, "— done")
	})
	text := r.threadText(mention.TS)
	for _, bad := range []string{"<!channel>", "<@U999>", "xoxb-test-secret"} {
		if strings.Contains(text, bad) {
			t.Errorf("the thread carries %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "&lt;!channel&gt;") {
		t.Errorf("model text was not escaped:\n%s", text)
	}
	if n := r.slack.Violations(); n != 0 {
		t.Errorf("%d rate limit violations", n)
	}
	if un := r.slack.Unacked(); len(un) != 0 {
		t.Errorf("unacknowledged envelopes: %v", un)
	}
}
