package telegram

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/backoff"
	"reasonix/internal/eventually"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// leaver keeps receipts (a bot.Receiver): it counts every delivery and,
// while failing is set, fails to record the message "flaky", as the relay
// does while its store is down.
type leaver struct {
	mu      sync.Mutex
	seen    map[string]int   // text -> deliveries
	ids     map[string]int64 // text -> update id
	failing atomic.Bool
}

func (l *leaver) HandleMessage(context.Context, bot.Inbound) {}

func (l *leaver) Receive(_ context.Context, in bot.Inbound) (func(context.Context), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[in.Text]++
	l.ids[in.Text], _ = strconv.ParseInt(in.EventID, 10, 64)
	if in.Text == "flaky" && l.failing.Load() {
		return nil, errors.New("store down")
	}
	return func(context.Context) {}, nil
}

func (l *leaver) HandleClick(context.Context, bot.Click) string { return "" }

func (l *leaver) deliveries(text string) (int, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[text], l.ids[text]
}

// An update the handler could not record is fetched again, with those after it in
// its batch, a backoff apart; the offset stops at it until it is done,
// then moves past the batch. Nothing is lost and nothing before it is
// fetched again.
func TestALeftUpdateIsFetchedAgainUntilDone(t *testing.T) {
	ctx := context.Background()
	fake := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	st := storetest.SQLite(t, store.Config{})
	for _, text := range []string{"before", "flaky", "after"} { // one batch: sent before the first poll
		fake.Send(11, 11, text, 0)
	}
	tr, err := New(Config{Token: "7:tok", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const step = 200 * time.Millisecond
	tr.retry = backoff.Policy{Base: step, Cap: step, Rand: func(n int64) int64 { return n - 1 }} // every wait is step
	h := &leaver{seen: map[string]int{}, ids: map[string]int64{}}
	h.failing.Store(true)
	if err := tr.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Stop(ctx) })
	offset := func() int64 {
		v, err := st.ChatCursor(ctx, offsetKey)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	eventually.True(t, 10*time.Second, func() bool { n, _ := h.deliveries("flaky"); return n >= 2 }, "the left update to be fetched again")
	// The store stays down: the polls go on, a step apart.
	polls, from := len(fake.Polls()), time.Now()
	eventually.True(t, 10*time.Second, func() bool { return len(fake.Polls()) >= polls+3 }, "three more polls")
	if took := time.Since(from); took < 2*step {
		t.Errorf("three polls in %v with a step of %v between them", took, step)
	}
	_, flaky := h.deliveries("flaky")
	if got := offset(); got != flaky {
		t.Errorf("offset %d while update %d is left, want %d", got, flaky, flaky)
	}
	if n, _ := h.deliveries("after"); n < 2 {
		t.Errorf("the update after the left one was delivered %d times, want it fetched again with it", n)
	}

	h.failing.Store(false)
	_, after := h.deliveries("after")
	eventually.True(t, 10*time.Second, func() bool { return offset() == after+1 && fake.Confirmed() == after+1 },
		"the offset to move past the batch once the left update is done")
	if n, _ := h.deliveries("before"); n != 1 {
		t.Errorf("the update before the left one was delivered %d times, want 1", n)
	}
}
