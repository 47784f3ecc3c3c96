package telegram_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/telegram"
	"reasonix/internal/eventually"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

const (
	token  = "42:lease-token"
	tgChat = 7 // a private chat: every message is for the bot
	tgUser = 7
)

// node is one serve node's Telegram intake: its own store connection and
// a handler that, like the relay, dedupes each update in the store before
// acting on it.
type node struct {
	name string
	st   *store.Store
	tr   *telegram.Transport
	log  *processed
	hold atomic.Bool // a "slow" message blocks its handler until the node stops
	// gate, when set, holds a "slow" message's handler until closed, as
	// a handler busy with slow work would be, whatever the node does.
	gate chan struct{}
	over chan struct{}
}

// poll starts n's transport on the fake bot, polling under a lease of ttl,
// and stops it when the test ends (a dead node's stop cannot release its
// lease; a node with over closes it first, ending its held handlers).
func (n *node) poll(t *testing.T, fake *bottest.Telegram, ttl time.Duration) {
	t.Helper()
	tr, err := telegram.New(telegram.Config{Token: token, APIEndpoint: fake.Endpoint(), Cursor: n.st,
		Lease: n.st, Node: n.name, LeaseTTL: ttl, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.tr = tr
	if err := tr.Start(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n.over != nil {
			close(n.over)
		}
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tr.Stop(sctx)
	})
}

// processed records, for every update, which node acted on it.
type processed struct {
	mu   sync.Mutex
	by   map[string][]string // event id -> nodes that acted on it
	text map[string]string
	seen map[string]int // deliveries, before the dedupe
	errs []error        // from finishing a claim
}

func (n *node) HandleMessage(ctx context.Context, in bot.Inbound) {
	n.log.mu.Lock()
	n.log.seen[in.EventID]++
	n.log.mu.Unlock()
	if n.hold.Load() && strings.Contains(in.Text, "slow") {
		<-ctx.Done() // the node dies before it gets to act
		return
	}
	if n.gate != nil && strings.Contains(in.Text, "slow") {
		select {
		case <-n.gate:
		case <-n.over: // the test ended (failed) without opening it
		}
	}
	c, err := n.st.ClaimChatEvent(ctx, "telegram:"+in.EventID, n.name, time.Minute)
	if err != nil || c != store.ChatClaimed {
		return
	}
	n.log.mu.Lock()
	n.log.by[in.EventID] = append(n.log.by[in.EventID], n.name)
	n.log.text[in.EventID] = in.Text
	n.log.mu.Unlock()
	if err := n.st.FinishChatEvent(ctx, "telegram:"+in.EventID); err != nil {
		n.log.mu.Lock()
		n.log.errs = append(n.log.errs, err)
		n.log.mu.Unlock()
	}
}

func (n *node) HandleClick(context.Context, bot.Click) string { return "" }

func (p *processed) snapshot() (map[string][]string, map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	by, text := map[string][]string{}, map[string]string{}
	for k, v := range p.by {
		by[k] = append([]string(nil), v...)
	}
	for k, v := range p.text {
		text[k] = v
	}
	return by, text
}

// texts lists the texts acted on, each once; a repeat fails the test.
func (p *processed) texts(t *testing.T) map[string]bool {
	t.Helper()
	by, text := p.snapshot()
	p.mu.Lock()
	for _, err := range p.errs {
		t.Errorf("finishing a claim: %v", err)
	}
	p.mu.Unlock()
	out := map[string]bool{}
	for id, nodes := range by {
		if len(nodes) != 1 {
			t.Errorf("update %s acted on %d times, by %v", id, len(nodes), nodes)
		}
		out[text[id]] = true
	}
	return out
}

// Two nodes share one bot token and one Postgres store. One polls at a
// time (Telegram never sees two getUpdates at once); when it dies in the
// middle of a batch, the other takes over after the lease runs out, from
// the stored offset: every update is acted on exactly once.
func TestTwoNodesPollOneTokenInTurn(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	fake := bottest.NewTelegram(t, token, bottest.SlackLimits{})
	log := &processed{by: map[string][]string{}, text: map[string]string{}, seen: map[string]int{}}
	const ttl = 2 * time.Second
	nodes := map[string]*node{}
	for _, name := range []string{"A", "B"} {
		n := &node{name: name, st: open(), log: log}
		n.poll(t, fake, ttl)
		nodes[name] = n
	}
	look := open()
	holder := func() string {
		h, err := look.PollLeaseHolder(ctx, "telegram")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	// Both alive: several long polls go by, all from one node.
	for i := range 4 {
		fake.Send(tgChat, tgUser, fmt.Sprintf("first %d", i), 0)
	}
	eventually.True(t, 10*time.Second, func() bool { return len(log.texts(t)) == 4 }, "the first updates")
	// A few poll rounds, and so lease renewals: each long poll with
	// nothing to fetch lasts its timeout (1 s), the lease is renewed every
	// third of its ttl (2 s).
	polled := len(fake.Polls())
	eventually.True(t, 10*time.Second, func() bool { return len(fake.Polls()) >= polled+3 }, "more polls and lease renewals")
	owner := holder()
	if owner != "A" && owner != "B" {
		t.Fatalf("poll lease holder %q", owner)
	}
	by, _ := log.snapshot()
	for id, ns := range by {
		if ns[0] != owner {
			t.Errorf("update %s handled by %s, but %s holds the poll lease", id, ns[0], owner)
		}
	}
	survivor := map[string]string{"A": "B", "B": "A"}[owner]

	// The holder takes a batch, and dies before it has acted on it: its
	// handler is stuck, then its database and its process go.
	nodes[owner].hold.Store(true)
	fake.Send(tgChat, tgUser, "slow one", 0)
	eventually.True(t, 10*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		for id, n := range log.seen {
			if n > 0 && log.by[id] == nil {
				return true
			}
		}
		return false
	}, "the holder to take the slow update")
	for i := range 3 {
		fake.Send(tgChat, tgUser, fmt.Sprintf("after %d", i), 0)
	}
	died := time.Now()
	nodes[owner].st.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = nodes[owner].tr.Stop(sctx)
	cancel()

	eventually.True(t, 15*time.Second, func() bool { return len(log.texts(t)) == 8 }, "the survivor to act on the rest")
	if took := time.Since(died); took < ttl/2 {
		t.Errorf("the survivor took over %v after the holder died, before its lease could have run out", took)
	}
	if h := holder(); h != survivor {
		t.Errorf("poll lease holder %q, want %s", h, survivor)
	}
	got := log.texts(t)
	for _, want := range []string{"first 0", "first 3", "slow one", "after 0", "after 2"} {
		if !got[want] {
			t.Errorf("%q was never acted on (got %v)", want, got)
		}
	}
	by, text := log.snapshot()
	for id, ns := range by {
		if s := text[id]; (strings.HasPrefix(s, "slow") || strings.HasPrefix(s, "after")) && ns[0] != survivor {
			t.Errorf("%q acted on by %s, which was dead by then", s, ns[0])
		}
	}
	if n := fake.Conflicts(); n != 0 {
		t.Errorf("Telegram saw %d concurrent getUpdates", n)
	}
	eventually.True(t, 10*time.Second, func() bool {
		v, _ := look.ChatCursor(ctx, "telegram:offset")
		return v > 0 && v == fake.Confirmed()
	}, "the survivor's offset to be saved and confirmed")
}

// Without a lease, two pollers of one token fight: Telegram ends one
// getUpdates with 409 whenever the other starts one. (This is what the
// lease prevents, and it shows the fake behaves as Telegram does.)
func TestTwoPollersWithoutALeaseConflict(t *testing.T) {
	fake := bottest.NewTelegram(t, token, bottest.SlackLimits{})
	st := storetest.SQLite(t, store.Config{})
	for range 2 {
		tr, err := telegram.New(telegram.Config{Token: token, APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Start(context.Background(), &node{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Stop(context.Background()) })
	}
	eventually.True(t, 10*time.Second, func() bool { return fake.Conflicts() > 0 }, "a 409")
}

// A node that stops cleanly finishes the batch it is handling, saves the
// offset and gives the lease up: the other node takes over at once and
// gets none of that batch again.
func TestAStoppingPollerFinishesItsBatchAndHandsOver(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	fake := bottest.NewTelegram(t, token, bottest.SlackLimits{})
	log := &processed{by: map[string][]string{}, text: map[string]string{}, seen: map[string]int{}}
	const ttl = 3 * time.Second
	start := func(name string) *node {
		n := &node{name: name, st: open(), log: log, gate: make(chan struct{}), over: make(chan struct{})}
		n.poll(t, fake, ttl)
		return n
	}
	a := start("A")
	eventually.True(t, 10*time.Second, func() bool { h, _ := a.st.PollLeaseHolder(ctx, "telegram"); return h == "A" }, "A to poll")
	fake.Send(tgChat, tgUser, "slow work", 0)
	eventually.True(t, 10*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.seen) == 1
	}, "A to take the slow update")
	start("B")
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		stopped <- a.tr.Stop(sctx)
	}()
	select {
	case err := <-stopped:
		t.Fatalf("A stopped (%v) in the middle of its batch", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(a.gate)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	handedOver := time.Now()
	fake.Send(tgChat, tgUser, "next", 0)
	eventually.True(t, 10*time.Second, func() bool { return len(log.texts(t)) == 2 }, "B to act on the next update")
	if d := time.Since(handedOver); d > ttl {
		t.Errorf("B took %v to take over a released lease (ttl %v)", d, ttl)
	}
	by, text := log.snapshot()
	for id, ns := range by {
		want := map[string]string{"slow work": "A", "next": "B"}[text[id]]
		if ns[0] != want {
			t.Errorf("%q acted on by %s, want %s", text[id], ns[0], want)
		}
	}
	log.mu.Lock()
	for id, n := range log.seen {
		if n != 1 {
			t.Errorf("update %s delivered %d times; the stopped node's offset was not saved", id, n)
		}
	}
	log.mu.Unlock()
}
