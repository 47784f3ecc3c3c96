package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// Slack is acknowledged only once the relay has handled a delivery: these
// tests kill or slow the handling and count what Slack's retries make of
// it with the relay's real claim in the store.

// An event whose handling outlasts the acknowledgement bound (2 s) is left
// for Slack to retry; the retry waits for the first handling and is
// acknowledged with it: one task, one acknowledgement, one status.
func TestSlowSlackEventIsRetriedAndHandledOnce(t *testing.T) {
	r := newClaimRig(t, testWindow)
	// Slack retries an unacknowledged event 3 s after sending it; sooner
	// here, while the first handling still runs.
	r.slack.RetryUnacked(2200*time.Millisecond, time.Minute)
	r.slack.Slow(2500 * time.Millisecond) // the acknowledging reaction takes that long
	ev := r.slack.Mention(alice, channel, "", "rename the config key")
	eventually(t, "Slack to retry the event", func() bool { sent, _ := r.slack.Envelopes(ev.ID); return sent == 2 })
	eventually(t, "the retry's acknowledgement", func() bool { _, acked := r.slack.Envelopes(ev.ID); return acked == 1 })
	r.slack.Slow(0)
	if u := r.slack.Unacked(); len(u) != 1 {
		t.Errorf("unacknowledged envelopes = %v, want only the first, slow one", u)
	}
	eventually(t, "the status message", func() bool { return r.statusPosts(ev.TS) == 1 })
	settle()
	if got := r.tasksWithPrompt(t, "rename the config key"); len(got) != 1 {
		t.Errorf("tasks = %d, want 1", len(got))
	}
	if n := r.reactionsOn(ev.TS); n != 1 {
		t.Errorf("acknowledgements = %d, want 1", n)
	}
	if n := r.statusPosts(ev.TS); n != 1 {
		t.Errorf("status messages = %d, want 1:\n%s", n, r.threadText(ev.TS))
	}
}

// TestSlackRetryAfterACrashStartsOneTask: node A takes an event's claim
// and dies before acting (nothing acknowledged it to Slack); Slack's retry
// reaches node B once A's claim is stale, and B starts the task: one
// task, and the retry acknowledged.
func TestSlackRetryAfterACrashStartsOneTask(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Turn{Text: "done"}
	}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: agenttest.NewScriptedProvider(turns...)})
	fake := bottest.NewSlack(t, bottest.SlackLimits{PerSecond: 10, Burst: 3})
	fake.RetryUnacked(1500*time.Millisecond, 1500*time.Millisecond, 1500*time.Millisecond)
	const window = time.Second
	cfg := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice}, AllowChannels: []string{channel}}}
	start := func(node string, wrap func(bot.Transport) bot.Transport) *relay.Relay {
		tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: fake.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{wrap(tr)}, Node: node,
			EditInterval: 50 * time.Millisecond, ScanInterval: 50 * time.Millisecond, ClaimWindow: window})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return r
	}
	claimed := make(chan string, 1)
	a := start("A", func(tr bot.Transport) bot.Transport { return &dying{Transport: tr, st: st, claimed: claimed} })
	eventually(t, "node A to connect", func() bool { open, _ := fake.Connected(); return open == 1 })

	ev := fake.Mention(alice, channel, "", "doomed: fix the build")
	select {
	case key := <-claimed:
		if strings.HasPrefix(key, "error: ") {
			t.Fatal(key)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node A never claimed the event")
	}
	died := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_ = a.Stop(sctx) // gives up on the stuck handler
	cancel()
	if _, acked := fake.Envelopes(ev.ID); acked != 0 {
		t.Fatal("node A acknowledged an event it never handled")
	}

	b := start("B", func(tr bot.Transport) bot.Transport { return tr })
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.Stop(sctx); err != nil {
			t.Errorf("node B stop: %v", err)
		}
	})
	eventually(t, "node B to handle Slack's retry", func() bool { _, acked := fake.Envelopes(ev.ID); return acked == 1 })
	if took := time.Since(died); took < window/2 {
		t.Errorf("the retry was handled %v after A died, before A's claim could be stale", took)
	}
	page, err := svc.Tasks(ctx, store.TaskFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range page.Tasks {
		if task.Prompt == "doomed: fix the build" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("tasks = %d, want 1", n)
	}
	if c, err := st.ClaimChatEvent(ctx, "slack:"+ev.ID, "probe", 0); err != nil || c != store.ChatHandled {
		t.Errorf("the event's claim = %v, %v; want handled", c, err)
	}
}
