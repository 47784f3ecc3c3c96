package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func testChat(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})

	// A delivery is claimed once, also by 20 racing claimers.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			c, err := s.ClaimChatEvent(ctx, "slack:Ev1", "n1", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if c == store.ChatClaimed {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("claims won = %d, want 1", wins.Load())
	}
	if c, _ := s.ClaimChatEvent(ctx, "slack:Ev2", "n1", time.Minute); c != store.ChatClaimed {
		t.Errorf("a different event: %v", c)
	}
	if _, err := s.ClaimChatEvent(ctx, " ", "n1", time.Minute); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("empty key: %v", err)
	}

	task := mustCreate(t, s, newTask("chat home"), "chat-1")
	other := mustCreate(t, s, newTask("other"), "chat-2")
	if _, err := s.ThreadTask(ctx, "slack", "C1", "1.2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unbound thread: %v", err)
	}
	if err := s.BindThread(ctx, "slack", "C1", "1.2", task.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.BindThread(ctx, "slack", "C1", "1.2", other.ID); err != nil {
		t.Fatal(err)
	}
	if id, err := s.ThreadTask(ctx, "slack", "C1", "1.2"); err != nil || id != task.ID {
		t.Errorf("thread task = %q, %v; want the first binding %s", id, err, task.ID)
	}
	if _, err := s.ThreadTask(ctx, "slack", "C2", "1.2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a thread of another channel: %v", err)
	}

	if _, err := s.ChatPost(ctx, task.ID, "status"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing post: %v", err)
	}
	first := store.ChatPost{TaskID: task.ID, Key: "status", Transport: "slack", Channel: "C1", MessageID: "1.3"}
	if err := s.SaveChatPost(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveChatPost(ctx, store.ChatPost{TaskID: task.ID, Key: "status", Transport: "slack", Channel: "C1", MessageID: "9.9"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChatPost(ctx, task.ID, "status"); err != nil || got != first {
		t.Errorf("post = %+v, %v; want the first %+v", got, err, first)
	}

	for _, k := range []string{"ev:1", "ev:1.2", "ev_x", "approval:a_1"} {
		if err := s.SaveChatPost(ctx, store.ChatPost{TaskID: task.ID, Key: k, Transport: "slack", Channel: "C1", MessageID: k}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.CountChatPosts(ctx, task.ID, "ev:"); err != nil || n != 2 {
		t.Errorf("posts under ev: = %d, %v; want 2", n, err)
	}
	if n, err := s.CountChatPosts(ctx, other.ID, "ev:"); err != nil || n != 0 {
		t.Errorf("another task's posts = %d, %v", n, err)
	}

	if v, err := s.ChatCursor(ctx, "telegram:offset"); err != nil || v != 0 {
		t.Errorf("fresh cursor = %d, %v", v, err)
	}
	for _, v := range []int64{10, 7, 12} {
		if err := s.SetChatCursor(ctx, "telegram:offset", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := s.ChatCursor(ctx, "telegram:offset"); v != 12 {
		t.Errorf("cursor = %d, want 12 (never moves back)", v)
	}
}

// testChatClaim: a claim is finished after the action; a claim never
// finished (its handler died) is taken again once older than the window,
// by exactly one of racing claimers; a finished one never.
func testChatClaim(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC).UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	advance := func(d time.Duration) { clock.Add(d.Microseconds()) }
	s := open(t, store.Config{Now: now})
	const window = 15 * time.Second
	claim := func(key, owner string) store.ChatClaim {
		t.Helper()
		c, err := s.ClaimChatEvent(ctx, key, owner, window)
		if err != nil {
			t.Fatalf("claim %s: %v", key, err)
		}
		return c
	}

	if c := claim("telegram:1", "a"); c != store.ChatClaimed {
		t.Fatalf("fresh claim = %v", c)
	}
	advance(window - time.Second)
	if c := claim("telegram:1", "b"); c != store.ChatInFlight {
		t.Fatalf("claim while the first is fresh = %v, want in flight", c)
	}
	if err := s.FinishChatEvent(ctx, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, window, 24 * time.Hour} {
		advance(d)
		if c := claim("telegram:1", "b"); c != store.ChatHandled {
			t.Fatalf("claim of a finished event after %v = %v, want handled", d, c)
		}
	}

	// Node a dies holding a claim: within the window it still counts as
	// in flight; after it, one of 10 racing nodes takes it over, once.
	if c := claim("telegram:2", "a"); c != store.ChatClaimed {
		t.Fatalf("fresh claim = %v", c)
	}
	advance(window - time.Millisecond)
	if c := claim("telegram:2", "b"); c != store.ChatInFlight {
		t.Fatalf("claim at the window's edge = %v, want in flight", c)
	}
	advance(time.Millisecond)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			c, err := s.ClaimChatEvent(ctx, "telegram:2", fmt.Sprint("n", i), window)
			if err != nil {
				t.Error(err)
			}
			switch c {
			case store.ChatClaimed:
				wins.Add(1)
			case store.ChatInFlight:
			default:
				t.Errorf("racing reclaim = %v", c)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("reclaims won = %d, want exactly 1", wins.Load())
	}
	// The new claim is fresh again: the window restarts from it.
	advance(window / 2)
	if c := claim("telegram:2", "c"); c != store.ChatInFlight {
		t.Fatalf("claim right after a reclaim = %v, want in flight", c)
	}
	advance(window)
	if c := claim("telegram:2", "c"); c != store.ChatClaimed {
		t.Fatalf("second reclaim = %v, want claimed", c)
	}
	if err := s.FinishChatEvent(ctx, "telegram:2"); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if c := claim("telegram:2", "d"); c != store.ChatHandled {
		t.Fatalf("claim after finishing = %v", c)
	}
	// Finishing an unknown event is a no-op, not a row.
	if err := s.FinishChatEvent(ctx, "telegram:none"); err != nil {
		t.Fatal(err)
	}
	if c := claim("telegram:none", "a"); c != store.ChatClaimed {
		t.Fatalf("claim after finishing an unknown key = %v", c)
	}

	// A claim released by its owner (its handling failed) is taken at
	// once; one released by another node, or finished, stays as it is.
	if c := claim("telegram:3", "a"); c != store.ChatClaimed {
		t.Fatalf("fresh claim = %v", c)
	}
	if err := s.ReleaseChatEvent(ctx, "telegram:3", "b"); err != nil {
		t.Fatal(err)
	}
	if c := claim("telegram:3", "b"); c != store.ChatInFlight {
		t.Fatalf("claim after another node's release = %v, want in flight", c)
	}
	if err := s.ReleaseChatEvent(ctx, "telegram:3", "a"); err != nil {
		t.Fatal(err)
	}
	if c := claim("telegram:3", "b"); c != store.ChatClaimed {
		t.Fatalf("claim after the owner's release = %v, want claimed at once", c)
	}
	if err := s.FinishChatEvent(ctx, "telegram:3"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseChatEvent(ctx, "telegram:3", "b"); err != nil {
		t.Fatal(err)
	}
	if c := claim("telegram:3", "c"); c != store.ChatHandled {
		t.Fatalf("claim after releasing a finished event = %v, want handled", c)
	}

	// A row from before two-phase claims (no claimed_at) counts as handled.
	if err := s.ExecForTest(ctx, fmt.Sprintf("INSERT INTO chat_events (key, created_at) VALUES ('slack:old', %d)", now().UnixMicro())); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if c := claim("slack:old", "a"); c != store.ChatHandled {
		t.Fatalf("claim of a legacy row = %v, want handled", c)
	}
}

// testInboxOnce: a message posted under a key is posted once; a repeat
// returns it, and says whether a run took it meanwhile.
func testInboxOnce(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("steer me"), "inbox-1")
	other := mustCreate(t, s, newTask("other"), "inbox-2")
	m, posted, err := s.PostMessageOnce(ctx, task.ID, "slack:U1", "left, not right", "slack:Ev9")
	if err != nil || !posted {
		t.Fatalf("first post = %v, %v", posted, err)
	}
	again, posted, err := s.PostMessageOnce(ctx, task.ID, "slack:U1", "left, not right", "slack:Ev9")
	if err != nil || posted || again.ID != m.ID || !again.TakenAt.IsZero() {
		t.Fatalf("repeat = %+v, %v, %v; want the first message %s, untaken", again, posted, err, m.ID)
	}
	// The same key on another task, and unkeyed posts, are their own.
	if _, posted, err := s.PostMessageOnce(ctx, other.ID, "slack:U1", "x", "slack:Ev9"); err != nil || !posted {
		t.Fatalf("same key, other task = %v, %v", posted, err)
	}
	for range 2 {
		if _, err := s.PostMessage(ctx, task.ID, "api:a", "unkeyed"); err != nil {
			t.Fatal(err)
		}
	}
	taken, err := s.TakeInbox(ctx, task.ID)
	if err != nil || len(taken) != 3 {
		t.Fatalf("inbox = %d messages, %v; want 3 (one keyed, two unkeyed)", len(taken), err)
	}
	again, posted, err = s.PostMessageOnce(ctx, task.ID, "slack:U1", "left, not right", "slack:Ev9")
	if err != nil || posted || again.ID != m.ID || again.TakenAt.IsZero() {
		t.Fatalf("repeat after taking = %+v, %v, %v; want taken", again, posted, err)
	}
	if rest, err := s.TakeInbox(ctx, task.ID); err != nil || len(rest) != 0 {
		t.Fatalf("inbox after a repeat = %d, %v; want empty", len(rest), err)
	}
	if _, _, err := s.PostMessageOnce(ctx, task.ID, "slack:U1", "x", " "); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("empty key: %v", err)
	}
}

// testChatPrune: pruning deletes the deliveries finished, abandoned or
// seen (legacy rows) before the cutoff, and keeps the rest; a pruned
// delivery is simply new again.
func testChatPrune(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var clock atomic.Int64
	start := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	clock.Store(start.UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	advance := func(d time.Duration) { clock.Add(d.Microseconds()) }
	s := open(t, store.Config{Now: now})
	claim := func(key string) store.ChatClaim {
		t.Helper()
		c, err := s.ClaimChatEvent(ctx, key, "n", time.Minute)
		if err != nil {
			t.Fatalf("claim %s: %v", key, err)
		}
		return c
	}
	finish := func(key string) {
		t.Helper()
		if err := s.FinishChatEvent(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	legacy := func(key string) {
		t.Helper()
		if err := s.ExecForTest(ctx, fmt.Sprintf("INSERT INTO chat_events (key, created_at) VALUES ('%s', %d)", key, now().UnixMicro())); err != nil {
			t.Fatal(err)
		}
	}

	// Day 0: an old finished one, an old abandoned claim, an old legacy row,
	// and one claimed now but finished only on day 5.
	claim("slack:old-done")
	finish("slack:old-done")
	claim("slack:old-abandoned")
	legacy("slack:old-legacy")
	claim("slack:late-done")
	advance(5 * 24 * time.Hour)
	finish("slack:late-done")
	// Day 5: a fresh legacy row, a fresh claim in flight.
	legacy("slack:new-legacy")
	claim("slack:new-inflight")
	advance(2*24*time.Hour + time.Hour) // day 7 + 1h

	n, err := s.PruneChatEvents(ctx, now().Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("pruned %d rows, want 3", n)
	}
	if got := count(t, s, "SELECT COUNT(*) FROM chat_events"); got != 3 {
		t.Errorf("%d rows left, want 3", got)
	}
	for _, key := range []string{"slack:late-done", "slack:new-legacy"} {
		if c := claim(key); c != store.ChatHandled {
			t.Errorf("kept %s: claim = %v, want handled", key, c)
		}
	}
	if c := claim("slack:new-inflight"); c != store.ChatInFlight && c != store.ChatClaimed {
		t.Errorf("kept slack:new-inflight: claim = %v", c)
	}
	// A pruned delivery, were it ever sent again, is new.
	if c := claim("slack:old-done"); c != store.ChatClaimed {
		t.Errorf("pruned slack:old-done: claim = %v, want claimed", c)
	}
	if n, err := s.PruneChatEvents(ctx, now().Add(-7*24*time.Hour)); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want nothing", n, err)
	}
}
