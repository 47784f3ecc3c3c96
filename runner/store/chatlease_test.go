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

// leaseKind is one of the store's leases, as the conformance suite drives it.
type leaseKind struct {
	claim   func(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	release func(ctx context.Context, key, owner string) error
	holder  func(ctx context.Context, key string) (string, error)
	// key makes a fresh key (a task, for a task's lease).
	key func(name string) string
}

func testChatLease(t *testing.T, open storetest.Opener) {
	t.Run("task", func(t *testing.T) {
		testLease(t, open, func(s *store.Store) leaseKind {
			return leaseKind{claim: s.ClaimChatLease, release: s.ReleaseChatLease, holder: s.ChatLeaseHolder,
				key: func(name string) string { return mustCreate(t, s, newTask(name), "lease-"+name).ID }}
		})
	})
	t.Run("poll", func(t *testing.T) {
		testLease(t, open, func(s *store.Store) leaseKind {
			return leaseKind{claim: s.ClaimPollLease, release: s.ReleasePollLease, holder: s.PollLeaseHolder,
				key: func(name string) string { return "telegram-" + name }}
		})
	})
}

func testLease(t *testing.T, open storetest.Opener, kind func(*store.Store) leaseKind) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := open(t, store.Config{Now: clock})
	k := kind(s)
	key := k.key("relayed")
	claim := func(owner string) bool {
		t.Helper()
		ok, err := k.claim(ctx, key, owner, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	holder := func() string {
		t.Helper()
		h, err := k.holder(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if holder() != "" || !claim("A") || claim("B") || !claim("A") {
		t.Fatal("A's lease: a free lease, then B refused, then A's renewal")
	}
	advance(9 * time.Second)
	if claim("B") || holder() != "A" {
		t.Fatal("B took a lease that had not run out")
	}
	advance(2 * time.Second) // A renewed at +0s with a 10s ttl: run out now
	if holder() != "" || !claim("B") || claim("A") || holder() != "B" {
		t.Fatalf("takeover after A's lease ran out: holder %q", holder())
	}
	if err := k.release(ctx, key, "A"); err != nil || holder() != "B" {
		t.Fatalf("A released B's lease: %v, holder %q", err, holder())
	}
	if err := k.release(ctx, key, "B"); err != nil || holder() != "" || !claim("A") {
		t.Fatalf("after B released: %v, holder %q", err, holder())
	}
	if _, err := k.claim(ctx, key, " ", time.Second); err == nil {
		t.Error("an empty owner was accepted")
	}

	// Twenty nodes racing for a fresh lease: one wins.
	other := k.key("raced")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			ok, err := k.claim(ctx, other, fmt.Sprint("node-", i), 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d nodes won the race, want 1", wins.Load())
	}
}
