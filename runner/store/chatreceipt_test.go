package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testChatReceipt: a delivery recorded on receipt is claimed by its
// receiver with its payload; a redelivery never overwrites it and keeps
// the two-phase claim's rules; a receipt whose claim went stale unfinished
// is listed for recovery (and no other row is), and exactly one of racing
// recoverers claims it.
func testChatReceipt(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var clock atomic.Int64
	start := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	clock.Store(start.UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	advance := func(d time.Duration) { clock.Add(d.Microseconds()) }
	s := open(t, store.Config{Now: now})
	const window = 15 * time.Second
	record := func(key, owner, payload string) store.ChatClaim {
		t.Helper()
		c, err := s.RecordChatEvent(ctx, key, owner, []byte(payload), window)
		if err != nil {
			t.Fatalf("record %s: %v", key, err)
		}
		return c
	}
	unfinished := func() map[string]string {
		t.Helper()
		list, err := s.UnfinishedChatEvents(ctx, window, start.Add(-time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range list {
			got[e.Key] = e.ClaimedBy + ":" + string(e.Payload)
		}
		return got
	}

	if _, err := s.RecordChatEvent(ctx, "slack:E0", "a", nil, window); err == nil {
		t.Fatal("a receipt without a payload was recorded")
	}
	if c := record("slack:E1", "a", `{"n":1}`); c != store.ChatClaimed {
		t.Fatalf("first receipt = %v, want claimed", c)
	}
	if c := record("slack:E1", "b", `{"n":2}`); c != store.ChatInFlight {
		t.Fatalf("redelivery while the receiver's claim is fresh = %v, want in flight", c)
	}
	if got := unfinished(); len(got) != 0 {
		t.Fatalf("a fresh receipt is listed for recovery: %v", got)
	}
	// A receipt claimed without a payload (an older node's claim) gets the
	// redelivery's; a finished one is left alone.
	if c, err := s.ClaimChatEvent(ctx, "slack:E2", "old", window); err != nil || c != store.ChatClaimed {
		t.Fatalf("claim = %v, %v", c, err)
	}
	if c := record("slack:E2", "b", `{"n":2}`); c != store.ChatInFlight {
		t.Fatalf("redelivery of a claim without payload = %v, want in flight", c)
	}
	record("slack:E3", "a", `{"n":3}`)
	if err := s.FinishChatEvent(ctx, "slack:E3"); err != nil {
		t.Fatal(err)
	}
	if c := record("slack:E3", "b", `{"n":9}`); c != store.ChatHandled {
		t.Fatalf("redelivery of a finished receipt = %v, want handled", c)
	}

	advance(window)
	want := map[string]string{"slack:E1": `a:{"n":1}`, "slack:E2": `old:{"n":2}`}
	if got := unfinished(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed for recovery = %v, want %v", got, want)
	}
	// A redelivery after the window takes the stale claim over and keeps
	// the first payload.
	if c := record("slack:E2", "c", `{"n":7}`); c != store.ChatClaimed {
		t.Fatalf("redelivery of a stale receipt = %v, want claimed", c)
	}
	if got := unfinished(); fmt.Sprint(got) != fmt.Sprint(map[string]string{"slack:E1": `a:{"n":1}`}) {
		t.Fatalf("after the takeover, listed = %v", got)
	}

	// Racing recoverers: exactly one claims the stale receipt.
	var (
		wg  sync.WaitGroup
		won atomic.Int32
	)
	for i := range 8 {
		wg.Go(func() {
			c, err := s.ClaimChatEvent(ctx, "slack:E1", fmt.Sprintf("n%d", i), window)
			if err != nil {
				t.Error(err)
			}
			if c == store.ChatClaimed {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d recoverers claimed the receipt, want 1", won.Load())
	}
	list, err := s.UnfinishedChatEvents(ctx, window, start.Add(-time.Hour), 100)
	if err != nil || len(list) != 0 {
		t.Fatalf("after the recovery claim, listed = %v, %v", list, err)
	}
	// The payload survived the reclaim; finishing removes it from the list
	// for good.
	advance(window)
	list, err = s.UnfinishedChatEvents(ctx, window, start.Add(-time.Hour), 100)
	if err != nil || len(list) != 2 || string(list[0].Payload) == "" {
		t.Fatalf("stale again: %v, %v", list, err)
	}
	for _, k := range []string{"slack:E1", "slack:E2"} {
		if err := s.FinishChatEvent(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	advance(window)
	if got := unfinished(); len(got) != 0 {
		t.Fatalf("finished receipts listed: %v", got)
	}
	// Receipts from before since are not listed (given up), nor are more
	// than limit.
	for i := range 3 {
		record(fmt.Sprintf("slack:F%d", i), "a", "{}")
	}
	advance(window)
	if list, _ := s.UnfinishedChatEvents(ctx, window, now(), 100); len(list) != 0 {
		t.Fatalf("receipts older than since listed: %v", list)
	}
	if list, _ := s.UnfinishedChatEvents(ctx, window, start, 2); len(list) != 2 {
		t.Fatalf("limit 2 listed %d", len(list))
	}
}
