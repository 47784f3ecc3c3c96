package relay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/config"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// dying is a Telegram intake whose node dies in the middle of handling a
// message that says "doomed": it takes the delivery's claim, as its relay
// does first, and never gets further.
type dying struct {
	bot.Transport
	st      *store.Store
	claimed chan string // the claimed delivery's key
}

func (d *dying) Start(ctx context.Context, h bot.Handler) error {
	return d.Transport.Start(ctx, dyingHandler{d: d, h: h})
}

type dyingHandler struct {
	d *dying
	h bot.Handler
}

func (x dyingHandler) HandleMessage(ctx context.Context, in bot.Inbound) {
	if !strings.Contains(in.Text, "doomed") {
		x.h.HandleMessage(ctx, in)
		return
	}
	key := in.Transport + ":" + in.EventID
	if c, err := x.d.st.ClaimChatEvent(ctx, key, "A", relay.DefaultClaimWindow); err != nil || c != store.ChatClaimed {
		x.d.claimed <- fmt.Sprintf("error: claiming %s: %v, %v", key, c, err)
		return
	}
	x.d.claimed <- key
	<-ctx.Done() // dead: nothing after the claim happens
}

func (x dyingHandler) HandleClick(ctx context.Context, c bot.Click) string {
	return x.h.HandleClick(ctx, c)
}

// TestTelegramTakeoverHandlesADeadNodesClaim: node A polls the bot, claims
// a DM and dies before acting on it (its offset not saved, its lease not
// given up). Node B takes polling over, fetches the DM again, finds A's
// claim unfinished, waits out the claim window, and starts the task: one
// task, one acknowledgement, one report.
func TestTelegramTakeoverHandlesADeadNodesClaim(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Turn{Text: "tg-takeover-report"}
	}
	prov := agenttest.NewScriptedProvider(turns...)
	const tgToken = "42:takeover-token"
	fake := bottest.NewTelegram(t, tgToken, bottest.SlackLimits{})
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111"}}}
	const window = 3 * time.Second
	spec := tgNodeSpec{open: open, prov: prov, fake: fake, token: tgToken, cfg: cfg, window: window}
	start := func(name string, wrap func(bot.Transport, *store.Store) bot.Transport) (*store.Store, *relay.Relay) {
		spec.wrap = wrap
		n := startTelegramNode(t, spec, name)
		return n.st, n.relay
	}
	look := open()
	claimed := make(chan string, 1)
	stA, relayA := start("A", func(tr bot.Transport, st *store.Store) bot.Transport {
		return &dying{Transport: tr, st: st, claimed: claimed}
	})
	eventually(t, "node A to poll", func() bool {
		h, err := look.PollLeaseHolder(ctx, "telegram")
		return err == nil && h == "A"
	})
	_, relayB := start("B", func(tr bot.Transport, _ *store.Store) bot.Transport { return tr })

	fake.Send(tgAlice, tgAlice, "doomed: fix the build", 0)
	var key string
	select {
	case key = <-claimed:
		if strings.HasPrefix(key, "error: ") {
			t.Fatal(key)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node A never claimed the DM")
	}
	died := time.Now()
	stA.Close()
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	_ = relayA.Stop(sctx) // gives up on the stuck handler; cannot save the offset or release the lease
	cancel()

	count := func(substr string) int {
		n := 0
		for _, m := range fake.Messages(tgAlice) {
			if strings.Contains(m.Text, substr) {
				n++
			}
		}
		return n
	}
	eventually(t, "node B to start the task and report", func() bool { return count("tg-takeover-report") >= 1 })
	if took := time.Since(died); took < window/2 {
		t.Errorf("node B handled the DM %v after A died, before A's claim could be stale", took)
	}
	if c, err := look.ClaimChatEvent(ctx, key, "probe", 0); err != nil || c != store.ChatHandled {
		t.Errorf("the DM's claim = %v, %v; want handled", c, err)
	}
	settle(t, relayB, false) // room for a duplicate to show
	page, err := look.ListTasks(ctx, store.TaskFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, task := range page.Tasks {
		if strings.Contains(task.Prompt, "fix the build") {
			tasks = append(tasks, task.ID)
		}
	}
	if len(tasks) != 1 {
		t.Errorf("tasks for the DM = %v, want one", tasks)
	}
	if n := fake.Reacted(tgAlice, "👀"); n != 1 {
		t.Errorf("%d acknowledgements, want 1", n)
	}
	if n := count("tg-takeover-report"); n != 1 {
		t.Errorf("%d reports, want 1", n)
	}
	if h, _ := look.PollLeaseHolder(ctx, "telegram"); h != "B" {
		t.Errorf("poll lease holder %q, want B", h)
	}
}
