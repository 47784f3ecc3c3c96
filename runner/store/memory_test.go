package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestMemories runs the memory behaviour on SQLite and Postgres: add
// (twice is once), scopes kept apart, list, forget (once) and the epoch
// that tells a node's recall index it is stale.
func TestMemories(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testMemories(t, open) })
	}
}

func testMemories(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	repo := store.MemoryScope{Kind: store.MemoryWorkspace, Name: "repo"}
	alice := store.MemoryScope{Kind: store.MemoryUser, Name: "slack:T1:U1"}
	for _, bad := range []store.NewMemory{
		{Scope: store.MemoryScope{Kind: "team", Name: "x"}, Text: "a", By: "token:a"},
		{Scope: store.MemoryScope{Kind: store.MemoryWorkspace, Name: " "}, Text: "a", By: "token:a"},
		{Scope: repo, Text: "  ", By: "token:a"},
		{Scope: repo, Text: strings.Repeat("x", store.MaxMemoryText+1), By: "token:a"},
		{Scope: repo, Text: "nul\x00byte", By: "token:a"},
		{Scope: repo, Text: "no author"},
	} {
		if _, _, err := s.AddMemory(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddMemory(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	e0, err := s.MemoryEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m1, created, err := s.AddMemory(ctx, store.NewMemory{Scope: repo, Text: " Tests run with make check ", By: "slack:T1:U1", TaskID: "t_1"})
	if err != nil || !created {
		t.Fatalf("AddMemory = %+v, %v, %v", m1, created, err)
	}
	if m1.Text != "Tests run with make check" || m1.Scope != repo || m1.By != "slack:T1:U1" || m1.TaskID != "t_1" || !m1.Live() || m1.CreatedAt.IsZero() {
		t.Errorf("added %+v", m1)
	}
	again, created, err := s.AddMemory(ctx, store.NewMemory{Scope: repo, Text: "Tests run with make check", By: "token:other"})
	if err != nil || created || again.ID != m1.ID || again.By != "slack:T1:U1" {
		t.Errorf("adding twice = %+v, created %v, %v; want the first memory", again, created, err)
	}
	if e1, _ := s.MemoryEpoch(ctx); e1 != e0+1 {
		t.Errorf("epoch after one add (and one repeat) = %d, want %d", e1, e0+1)
	}
	// The same text in another scope is another memory.
	m2, created, err := s.AddMemory(ctx, store.NewMemory{Scope: alice, Text: "Tests run with make check", By: "slack:T1:U1"})
	if err != nil || !created || m2.ID == m1.ID {
		t.Fatalf("same text in the user scope = %+v, %v, %v", m2, created, err)
	}
	m3, _, err := s.AddMemory(ctx, store.NewMemory{Scope: store.MemoryScope{Kind: store.MemoryWorkspace, Name: "other"}, Text: "other fact", By: "token:a"})
	if err != nil {
		t.Fatal(err)
	}
	got, epoch, err := s.Memories(ctx, store.MemoryFilter{Scopes: []store.MemoryScope{repo, alice}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != m2.ID || got[1].ID != m1.ID {
		t.Errorf("Memories(repo, alice) = %+v, want m2, m1 (newest first)", got)
	}
	if now, _ := s.MemoryEpoch(ctx); epoch != now {
		t.Errorf("listed at epoch %d, epoch is %d", epoch, now)
	}
	if all, _, _ := s.Memories(ctx, store.MemoryFilter{}); len(all) != 3 {
		t.Errorf("Memories() = %d memories, want 3", len(all))
	}
	if one, _, _ := s.Memories(ctx, store.MemoryFilter{Limit: 1}); len(one) != 1 || one[0].ID != m3.ID {
		t.Errorf("Memories(limit 1) = %+v, want the newest", one)
	}

	if _, err := s.ForgetMemory(ctx, m1.ID, ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("forget without a name = %v, want ErrInvalid", err)
	}
	if _, err := s.ForgetMemory(ctx, "mem_nope", "token:a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("forget unknown = %v, want ErrNotFound", err)
	}
	before, _ := s.MemoryEpoch(ctx)
	f, err := s.ForgetMemory(ctx, m1.ID, "token:admin")
	if err != nil || f.Live() || f.ForgottenBy != "token:admin" {
		t.Fatalf("ForgetMemory = %+v, %v", f, err)
	}
	f2, err := s.ForgetMemory(ctx, m1.ID, "token:late")
	if err != nil || f2.ForgottenBy != "token:admin" || !f2.ForgottenAt.Equal(f.ForgottenAt) {
		t.Errorf("forgetting twice = %+v, %v; want the first forget", f2, err)
	}
	if after, _ := s.MemoryEpoch(ctx); after != before+1 {
		t.Errorf("epoch after one forget (and one repeat) = %d, want %d", after, before+1)
	}
	if live, _, _ := s.Memories(ctx, store.MemoryFilter{Scopes: []store.MemoryScope{repo}}); len(live) != 0 {
		t.Errorf("a forgotten memory is listed: %+v", live)
	}
	if all, _, _ := s.Memories(ctx, store.MemoryFilter{Scopes: []store.MemoryScope{repo}, All: true}); len(all) != 1 || all[0].Live() {
		t.Errorf("All lists %+v, want the forgotten memory", all)
	}
	// Forgotten, the same text can be remembered again: a new memory.
	re, created, err := s.AddMemory(ctx, store.NewMemory{Scope: repo, Text: "Tests run with make check", By: "token:a"})
	if err != nil || !created || re.ID == m1.ID {
		t.Errorf("remembering a forgotten text = %+v, %v, %v", re, created, err)
	}
	if got, err := s.Memory(ctx, m1.ID); err != nil || got.ID != m1.ID || got.Live() {
		t.Errorf("Memory(m1) = %+v, %v", got, err)
	}
	if _, err := s.Memory(ctx, "mem_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Memory(unknown) = %v, want ErrNotFound", err)
	}
	for _, v := range []string{"workspace:repo", "user:slack:T1:U1"} {
		sc, err := store.ParseMemoryScope(v)
		if err != nil || sc.String() != v {
			t.Errorf("ParseMemoryScope(%q) = %v, %v", v, sc, err)
		}
	}
	for _, v := range []string{"", "workspace:", "team:x", "user"} {
		if _, err := store.ParseMemoryScope(v); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ParseMemoryScope(%q) = %v, want ErrInvalid", v, err)
		}
	}
}
