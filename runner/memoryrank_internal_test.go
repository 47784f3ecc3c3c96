package runner

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"reasonix/internal/redact"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// rankFixture is a service whose store and recall share a settable clock.
type rankFixture struct {
	mu   sync.Mutex
	at   time.Time
	st   *store.Store
	m    *taskMemory
	task store.Task
}

func newRankFixture(t *testing.T) *rankFixture {
	f := &rankFixture{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), task: store.Task{ID: "t_1", Workspace: "repo", Requester: "token:alice"}}
	f.st = storetest.SQLite(t, store.Config{Now: f.now})
	f.m = &taskMemory{s: &Service{st: f.st, redact: redact.New("sk-unused-secret"), log: storetest.Quiet(), now: f.now}, task: f.task}
	return f
}

func (f *rankFixture) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.at }
func (f *rankFixture) advance(d time.Duration) {
	f.mu.Lock()
	f.at = f.at.Add(d)
	f.mu.Unlock()
}

func (f *rankFixture) add(t *testing.T, kind store.MemoryKind, text string) string {
	t.Helper()
	m, _, err := f.st.AddMemory(context.Background(), store.NewMemory{Scope: memoryScopes(f.task)[map[store.MemoryKind]int{store.MemoryWorkspace: 0, store.MemoryUser: 1}[kind]], Text: text, By: "token:alice"})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func (f *rankFixture) search(t *testing.T, q string) []string {
	t.Helper()
	got, err := f.m.Search(context.Background(), q, 5)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(got))
	for i, e := range got {
		ids[i] = e.ID
	}
	return ids
}

// TestRecallRanksStaleFactsLower: of two facts on the query, the one
// scoring higher ranks first while both are fresh; once it is older than
// staleAfter its score weighs half and the fresher one ranks first.
func TestRecallRanksStaleFactsLower(t *testing.T) {
	f := newRankFixture(t)
	old := f.add(t, store.MemoryWorkspace, "Staging deploy: database migration.")
	f.advance(10 * 24 * time.Hour)
	fresh := f.add(t, store.MemoryWorkspace, "Staging deploy: database migration, with notes from ops.")
	if got := f.search(t, "staging deploy database migration"); len(got) != 2 || got[0] != old {
		t.Fatalf("both fresh: %v, want %s first", got, old)
	}
	f.advance(staleAfter - 5*24*time.Hour) // old is stale now, fresh is not
	if got := f.search(t, "staging deploy database migration"); len(got) != 2 || got[0] != fresh || got[1] != old {
		t.Fatalf("old stale: %v, want %s then %s", got, fresh, old)
	}
}

// TestRecallWorkspaceFactOverridesUserFact: a user fact on the subject of
// a workspace fact among the hits is left out; a user fact on another
// subject is still recalled.
func TestRecallWorkspaceFactOverridesUserFact(t *testing.T) {
	f := newRankFixture(t)
	ws := f.add(t, store.MemoryWorkspace, "Run the tests with make test-race before pushing.")
	same := f.add(t, store.MemoryUser, "Run the tests with make test before pushing.")
	other := f.add(t, store.MemoryUser, "Pushing large tests fixtures needs git lfs.")
	got := f.search(t, "run the tests before pushing large fixtures")
	has := map[string]bool{}
	for _, id := range got {
		has[id] = true
	}
	if !has[ws] || has[same] || !has[other] {
		t.Fatalf("recalled %v: want the workspace fact %s and the other user fact %s, not the overridden %s", got, ws, other, same)
	}
	// Without the workspace fact the user's own is recalled.
	if _, err := f.st.ForgetMemory(context.Background(), ws, "token:alice"); err != nil {
		t.Fatal(err)
	}
	if got := f.search(t, "run the tests before pushing large fixtures"); !slices.Contains(got, same) {
		t.Fatalf("after forgetting the workspace fact: %v, want %s among them", got, same)
	}
}
