package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

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
			ok, err := s.ClaimChatEvent(ctx, "slack:Ev1")
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
		t.Errorf("claims won = %d, want 1", wins.Load())
	}
	if ok, _ := s.ClaimChatEvent(ctx, "slack:Ev2"); !ok {
		t.Error("a different event was refused")
	}
	if _, err := s.ClaimChatEvent(ctx, " "); !errors.Is(err, store.ErrInvalid) {
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
