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

func testChatLease(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := open(t, store.Config{Now: clock})
	task := mustCreate(t, s, newTask("relayed"), "lease-1")
	claim := func(owner string) bool {
		t.Helper()
		ok, err := s.ClaimChatLease(ctx, task.ID, owner, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	holder := func() string {
		t.Helper()
		h, err := s.ChatLeaseHolder(ctx, task.ID)
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
	if err := s.ReleaseChatLease(ctx, task.ID, "A"); err != nil || holder() != "B" {
		t.Fatalf("A released B's lease: %v, holder %q", err, holder())
	}
	if err := s.ReleaseChatLease(ctx, task.ID, "B"); err != nil || holder() != "" || !claim("A") {
		t.Fatalf("after B released: %v, holder %q", err, holder())
	}
	if _, err := s.ClaimChatLease(ctx, task.ID, " ", time.Second); err == nil {
		t.Error("an empty owner was accepted")
	}

	// Twenty nodes racing for a fresh task: one wins.
	other := mustCreate(t, s, newTask("raced"), "lease-2")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			ok, err := s.ClaimChatLease(ctx, other.ID, fmt.Sprint("node-", i), 10*time.Second)
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
