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
	"reasonix/bot/slack"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestTwoNodesRelayATaskOnce: two serve nodes on one Postgres, each with
// its own relay connected to the same Slack app. Both find the task, one
// relays it: one status message, one approval message. When that node
// loses the database (its lease can no longer be renewed), the other takes
// the task over within the lease's ttl and finishes relaying it — still
// one status message, and one report.
func TestTwoNodesRelayATaskOnce(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	turns := make([]agenttest.Turn, 20)
	for i := range turns {
		turns[i] = agenttest.Respond(approvalScript)
	}
	prov := agenttest.NewScriptedProvider(turns...)
	fake := bottest.NewSlack(t, bottest.SlackLimits{PerSecond: 10, Burst: 3})
	cfg := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob},
		AllowChannels: []string{channel}, Approvers: []string{bob}}}
	// Long enough that a node slowed by a loaded machine still renews in time.
	const ttl = 3 * time.Second
	type node struct {
		svc   *runner.Service
		st    *store.Store // the relay's own connection, to cut
		relay *relay.Relay
	}
	start := func(name string) node {
		svc := runnertest.Start(t, runnertest.Options{Provider: prov, Store: open(), Settings: withBot(nil, cfg), Configure: func(c *runner.Config) { c.Node = name }})
		st := open()
		tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: fake.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
			EditInterval: 120 * time.Millisecond, ScanInterval: 50 * time.Millisecond, LeaseTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_ = r.Stop(sctx) // the cut node's stop reports its closed store
		})
		return node{svc: svc, st: st, relay: r}
	}
	nodes := map[string]node{"A": start("A"), "B": start("B")}
	look := open()

	m := fake.Mention(alice, channel, "", "relay me once")
	var ap bottest.SlackMessage
	eventually(t, "the approval message", func() bool {
		for _, msg := range fake.Thread(channel, m.TS) {
			if len(msg.Buttons) > 0 {
				ap = msg
				return true
			}
		}
		return false
	})
	id, err := look.ThreadTask(ctx, "slack", channel, m.TS)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes { // both nodes' scans have seen the task, more than once
		settle(t, n.relay, false)
	}
	if n := len(fake.Thread(channel, m.TS)); n != 2 {
		t.Fatalf("%d messages in the thread, want the status and the approval:\n%+v", n, fake.Thread(channel, m.TS))
	}
	owner, err := look.ChatLeaseHolder(ctx, id)
	if err != nil || (owner != "A" && owner != "B") {
		t.Fatalf("lease holder = %q, %v", owner, err)
	}
	survivor := map[string]string{"A": "B", "B": "A"}[owner]
	t.Logf("node %s relays the task; it dies", owner)
	// A crash, as the others see it: its lease is not given up (the
	// database is gone when it stops) and its Slack link closes.
	nodes[owner].st.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = nodes[owner].relay.Stop(sctx)
	cancel()
	eventually(t, "the survivor to take the lease over", func() bool {
		h, err := look.ChatLeaseHolder(ctx, id)
		return err == nil && h == survivor
	})

	fake.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, nodes[survivor].svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	eventually(t, "the report", func() bool {
		return strings.Contains(threadText(fake, m.TS), "finished: ran")
	})
	eventually(t, "the survivor to finish the status message", func() bool {
		msgs := fake.Thread(channel, m.TS)
		return len(msgs) > 0 && strings.Contains(msgs[0].Text, "— done")
	})
	settle(t, nodes[survivor].relay, false)
	var statuses, reports, approvals int
	for _, msg := range fake.Thread(channel, m.TS) {
		switch {
		case strings.Contains(msg.Text, "relay me once") && strings.Contains(msg.Text, "Task "+id):
			statuses++
		case strings.Contains(msg.Text, "finished: ran"):
			reports++
		case msg.TS == ap.TS:
			approvals++
		}
	}
	if statuses != 1 || reports != 1 || approvals != 1 {
		t.Errorf("status %d, report %d, approval %d messages; want one each:\n%s", statuses, reports, approvals, threadText(fake, m.TS))
	}
	if msgs := fake.Thread(channel, m.TS); !strings.Contains(msgs[0].Text, "— done") {
		t.Errorf("the status message was not finished by the survivor: %q", msgs[0].Text)
	}
}

func threadText(fake *bottest.Slack, thread string) string {
	var b strings.Builder
	for _, m := range fake.Thread(channel, thread) {
		b.WriteString(m.Text + "\n---\n")
	}
	return b.String()
}

// TestTwoNodesShareOneTelegramBot: two serve nodes on one Postgres, each
// with a relay long-polling the same Telegram bot. One polls at a time
// (Telegram never sees two getUpdates at once) and each DM becomes one
// task with one acknowledgement and one report; when the polling node
// dies, the other takes polling over and the next DM is served the same.
func TestTwoNodesShareOneTelegramBot(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Turn{Text: "tg-report-text"}
	}
	prov := agenttest.NewScriptedProvider(turns...)
	const tgToken = "42:two-node-token"
	fake := bottest.NewTelegram(t, tgToken, bottest.SlackLimits{})
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111"}, Approvers: []string{"222"}}}
	nodes := map[string]tgNode{}
	for _, name := range []string{"A", "B"} {
		nodes[name] = startTelegramNode(t, tgNodeSpec{open: open, prov: prov, fake: fake, token: tgToken, cfg: cfg}, name)
	}
	look := open()
	count := func(substr string) int {
		n := 0
		for _, m := range fake.Messages(tgAlice) {
			if strings.Contains(m.Text, substr) {
				n++
			}
		}
		return n
	}
	ask := func(text string, reports int) {
		t.Helper()
		fake.Send(tgAlice, tgAlice, text, 0)
		eventually(t, "report "+strconv.Itoa(reports), func() bool { return count("tg-report-text") >= reports })
	}

	ask("first task", 1)
	polled := len(fake.Polls()) // more polls and renewals go by
	eventually(t, "more polls", func() bool { return len(fake.Polls()) >= polled+3 })
	poller, err := look.PollLeaseHolder(ctx, "telegram")
	if err != nil || (poller != "A" && poller != "B") {
		t.Fatalf("poll lease holder %q, %v", poller, err)
	}
	t.Logf("node %s polls; it dies", poller)
	nodes[poller].st.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = nodes[poller].relay.Stop(sctx)
	cancel()

	ask("second task", 2)
	for name, n := range nodes {
		if name != poller {
			settle(t, n.relay, false)
		}
	}
	if n := fake.Reacted(tgAlice, "👀"); n != 2 {
		t.Errorf("%d acknowledgements, want one per DM", n)
	}
	if n := count("tg-report-text"); n != 2 {
		t.Errorf("%d reports, want one per DM", n)
	}
	if h, _ := look.PollLeaseHolder(ctx, "telegram"); h == poller || h == "" {
		t.Errorf("poll lease holder %q after %s died", h, poller)
	}
	if n := fake.Conflicts(); n != 0 {
		t.Errorf("Telegram saw %d concurrent getUpdates", n)
	}
}

// tgNode is one serve node of a multi-node Telegram test: its store, and
// a relay long-polling the fake bot for the runner service beside it.
type tgNode struct {
	st    *store.Store
	relay *relay.Relay
}

// tgNodeSpec is what the nodes of one Telegram test share.
type tgNodeSpec struct {
	open  func() *store.Store
	prov  *agenttest.ScriptedProvider
	fake  *bottest.Telegram
	token string
	cfg   config.Bot
	// window is the relay's ClaimWindow (0: its default); wrap, when set,
	// wraps the node's transport before the relay gets it.
	window time.Duration
	wrap   func(bot.Transport, *store.Store) bot.Transport
}

// startTelegramNode starts node name: a runner service and a relay, each
// on a store of its own, stopped when the test ends.
func startTelegramNode(t *testing.T, spec tgNodeSpec, name string) tgNode {
	t.Helper()
	ctx := context.Background()
	svc := runnertest.Start(t, runnertest.Options{Provider: spec.prov, Store: spec.open(), Settings: withBot(nil, spec.cfg), Configure: func(c *runner.Config) { c.Node = name }})
	st := spec.open()
	tg, err := telegram.New(telegram.Config{Token: spec.token, APIEndpoint: spec.fake.Endpoint(), Cursor: st,
		Lease: st, Node: name, LeaseTTL: 2 * time.Second, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var tr bot.Transport = tg
	if spec.wrap != nil {
		tr = spec.wrap(tg, st)
	}
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: spec.cfg, Transports: []bot.Transport{tr},
		EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond, LeaseTTL: 3 * time.Second,
		ClaimWindow: spec.window})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = r.Stop(sctx) // a node whose store was closed reports it
	})
	return tgNode{st: st, relay: r}
}
