package maintenance

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/runner/store"
)

type fakeGCStore struct {
	mu       sync.Mutex
	tasks    map[string]store.GCTask
	prunable []store.PrunableTask
	pruned   []string
	prunes   int
}

func (f *fakeGCStore) GCTasks(_ context.Context, ids []string) (map[string]store.GCTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]store.GCTask{}
	for _, id := range ids {
		if t, ok := f.tasks[id]; ok {
			out[id] = t
		}
	}
	return out, nil
}

func (f *fakeGCStore) PrunableTasks(_ context.Context, before time.Time, after *store.PrunableTask, limit int) ([]store.PrunableTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.PrunableTask
	for _, p := range f.prunable {
		if p.FinishedAt.Before(before) && !slices.Contains(f.pruned, p.ID) && (after == nil || p.ID > after.ID) && len(out) < limit {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *fakeGCStore) PruneTasks(_ context.Context, ids []string, _ time.Time) ([]string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prunes++
	f.pruned = append(f.pruned, ids...)
	return ids, 0, nil
}

type fakeDisk struct {
	mu        sync.Mutex
	left      []Leftover
	holdings  map[string]Holding
	published map[string]string // what Inspect was asked, by task
	inspects  map[string]int
	collected map[string]Collection
}

func (f *fakeDisk) Leftovers(context.Context) ([]Leftover, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.left), nil
}

func (f *fakeDisk) Inspect(_ context.Context, id, published string) (Holding, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published[id] = published
	f.inspects[id]++
	return f.holdings[id], nil
}

func (f *fakeDisk) Collect(_ context.Context, id string, c Collection) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collected[id] = c
	return nil
}

// gcFixture: a node holding directories of tasks in every situation the
// policy tells apart, eight days after most of them ended.
func gcFixture(now time.Time) (*fakeGCStore, *fakeDisk) {
	old := now.Add(-8 * 24 * time.Hour)
	const pub = "0123456789abcdef0123456789abcdef01234567"
	st := &fakeGCStore{tasks: map[string]store.GCTask{
		"published":   {ID: "published", State: store.StateSucceeded, FinishedAt: old, Published: pub},
		"unchanged":   {ID: "unchanged", State: store.StateFailed, FinishedAt: old},
		"unpublished": {ID: "unpublished", State: store.StateSucceeded, FinishedAt: old},
		"dirty":       {ID: "dirty", State: store.StateCancelled, FinishedAt: old, Published: pub},
		"tampered":    {ID: "tampered", State: store.StateFailed, FinishedAt: old},
		"scratch":     {ID: "scratch", State: store.StateSucceeded, FinishedAt: old},
		"young":       {ID: "young", State: store.StateSucceeded, FinishedAt: now.Add(-time.Hour)},
		"running":     {ID: "running", State: store.StateRunning},
		"gone":        {ID: "gone", State: store.StateSucceeded, FinishedAt: old},
	}}
	disk := &fakeDisk{
		left: []Leftover{
			{Task: "published", Worktree: true, Record: true},
			{Task: "unchanged", Record: true},
			{Task: "unpublished", Worktree: true, Record: true},
			{Task: "dirty", Worktree: true, Record: true},
			{Task: "tampered", Worktree: true, Record: true},
			{Task: "scratch", Scratch: true},
			{Task: "young", Scratch: true, Worktree: true, Record: true},
			{Task: "running", Scratch: true},
			{Task: "stranger", Scratch: true},
			{Task: "gone", Record: true},
		},
		holdings: map[string]Holding{
			"published":   {Worktree: true, Branch: true, Head: pub},
			"unchanged":   {Branch: true, Head: "1111111111111111111111111111111111111111"},
			"unpublished": {Worktree: true, Branch: true, Head: "2222222222222222222222222222222222222222", Unpublished: 2},
			"dirty":       {Worktree: true, Dirty: true, Branch: true, Head: pub},
			"tampered":    {Worktree: true, Tampered: "the worktree's .git file changed"},
			"gone":        {},
		},
		published: map[string]string{},
		inspects:  map[string]int{},
		collected: map[string]Collection{},
	}
	return st, disk
}

func itemsOf(items []GCItem) map[string]GCItem {
	out := map[string]GCItem{}
	for _, it := range items {
		out[it.Task+" "+it.What] = it
	}
	return out
}

// TestGCPolicy: published or unchanged and old goes (worktree, branch);
// unpublished commits, uncommitted work, tampered links and strangers
// stay, each with its reason; a scratch directory goes with its task;
// young and running tasks are not mentioned. A dry run says the same and
// removes nothing.
func TestGCPolicy(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, dry := range []bool{true, false} {
		st, disk := gcFixture(now)
		g := NewGC(st, disk, GCConfig{Now: func() time.Time { return now }})
		items, err := g.Collect(t.Context(), GCOpts{DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		got := itemsOf(items)
		want := map[string]struct {
			remove bool
			reason string
		}{
			"published worktree":   {true, "published (0123456789ab)"},
			"published branch":     {true, "published (0123456789ab)"},
			"unchanged branch":     {true, "no changes"},
			"unpublished worktree": {false, "2 commit(s) not published"},
			"unpublished branch":   {false, "2 commit(s) not published"},
			"dirty worktree":       {false, "uncommitted changes"},
			"dirty branch":         {false, "uncommitted changes"},
			"tampered worktree":    {false, "git links changed"},
			"scratch scratch":      {true, "scratch directory of a task finished"},
			"stranger scratch":     {false, "no such task"},
		}
		if len(got) != len(want) {
			t.Errorf("dry=%v: %d items, want %d: %+v", dry, len(got), len(want), items)
		}
		for k, w := range want {
			it, ok := got[k]
			if !ok || it.Remove != w.remove || !strings.Contains(it.Reason, w.reason) || it.Err != "" {
				t.Errorf("dry=%v: %s = %+v (found %v); want remove=%v, reason with %q", dry, k, it, ok, w.remove, w.reason)
			}
		}
		if disk.published["published"] != st.tasks["published"].Published {
			t.Errorf("inspect was not told the published commit: %q", disk.published["published"])
		}
		if dry {
			if len(disk.collected) != 0 {
				t.Errorf("a dry run collected %+v", disk.collected)
			}
			continue
		}
		wantCollected := map[string]Collection{
			"published": {Worktree: true, Branch: true, Head: disk.holdings["published"].Head},
			"unchanged": {Branch: true, Head: disk.holdings["unchanged"].Head},
			"scratch":   {Scratch: true},
			"gone":      {Record: true},
		}
		if len(disk.collected) != len(wantCollected) {
			t.Errorf("collected %+v; want %+v", disk.collected, wantCollected)
		}
		for id, c := range wantCollected {
			if disk.collected[id] != c {
				t.Errorf("collected of %s = %+v; want %+v", id, disk.collected[id], c)
			}
		}
	}
}

// TestGCRemembersUnpublishedBranches: a branch alone holding unpublished
// commits is inspected once; later passes repeat the verdict until the
// task's end or published commit changes.
func TestGCRemembersUnpublishedBranches(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st, disk := gcFixture(now)
	disk.left = []Leftover{{Task: "unchanged", Record: true}}
	disk.holdings["unchanged"] = Holding{Branch: true, Head: "1111111111111111111111111111111111111111", Unpublished: 3}
	g := NewGC(st, disk, GCConfig{Now: func() time.Time { return now }})
	for pass := range 3 {
		items, err := g.Collect(t.Context(), GCOpts{})
		if err != nil || len(items) != 1 || items[0].Remove || items[0].Reason != "3 commit(s) not published" {
			t.Fatalf("pass %d: %+v, %v", pass, items, err)
		}
	}
	if disk.inspects["unchanged"] != 1 {
		t.Fatalf("inspected %d times; want once", disk.inspects["unchanged"])
	}
	// Published since: judged again, and now it goes.
	st.mu.Lock()
	tk := st.tasks["unchanged"]
	tk.Published = "1111111111111111111111111111111111111111"
	st.tasks["unchanged"] = tk
	st.mu.Unlock()
	disk.holdings["unchanged"] = Holding{Branch: true, Head: tk.Published}
	items, err := g.Collect(t.Context(), GCOpts{})
	if err != nil || disk.inspects["unchanged"] != 2 || len(items) != 1 || !items[0].Remove {
		t.Fatalf("after publishing: %+v, %v; inspects %d", items, err, disk.inspects["unchanged"])
	}
}

// TestGCLeavesATaskContinuedMeanwhile: a task continued between the
// pass's read and its removal keeps everything.
func TestGCLeavesATaskContinuedMeanwhile(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st, disk := gcFixture(now)
	disk.left = []Leftover{{Task: "published", Worktree: true, Record: true}}
	g := NewGC(st, &continuingDisk{fakeDisk: disk, st: st}, GCConfig{Now: func() time.Time { return now }})
	items, err := g.Collect(t.Context(), GCOpts{})
	if err != nil || len(items) != 0 || len(disk.collected) != 0 {
		t.Fatalf("a continued task: items %+v, %v; collected %+v", items, err, disk.collected)
	}
}

// continuingDisk is a disk whose Inspect sees the task continued: its
// state in the store goes back to running.
type continuingDisk struct {
	*fakeDisk
	st *fakeGCStore
}

func (d *continuingDisk) Inspect(ctx context.Context, id, published string) (Holding, error) {
	d.st.mu.Lock()
	tk := d.st.tasks[id]
	tk.State, tk.FinishedAt = store.StateRunning, time.Time{}
	d.st.tasks[id] = tk
	d.st.mu.Unlock()
	return d.fakeDisk.Inspect(ctx, id, published)
}

// TestGCHistory: tasks ended before retain are pruned, with what they
// held; a dry run lists them and prunes nothing; a negative retain never
// prunes.
func TestGCHistory(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st := &fakeGCStore{prunable: []store.PrunableTask{
		{ID: "a", State: store.StateSucceeded, FinishedAt: now.Add(-100 * 24 * time.Hour), Events: 5, Messages: 4, Journal: 3, Bytes: 11000},
		{ID: "b", State: store.StateFailed, FinishedAt: now.Add(-91 * 24 * time.Hour)}, // nothing left to prune
		{ID: "c", State: store.StateSucceeded, FinishedAt: now.Add(-10 * 24 * time.Hour), Events: 1},
	}}
	g := NewGC(st, nil, GCConfig{Now: func() time.Time { return now }})
	items, err := g.Collect(t.Context(), GCOpts{DryRun: true, History: true})
	if err != nil || len(items) != 1 || items[0].Task != "a" || items[0].What != GCHistory || items[0].Rows != 12 || items[0].Bytes != 11000 ||
		!strings.Contains(items[0].Reason, "5 events, 4 messages, 3 tool calls") || st.prunes != 0 {
		t.Fatalf("dry run = %+v, %v; prunes %d", items, err, st.prunes)
	}
	if items, err := g.Collect(t.Context(), GCOpts{}); err != nil || len(items) != 0 || st.prunes != 0 {
		t.Fatalf("a pass without History = %+v, %v", items, err)
	}
	items, err = g.Collect(t.Context(), GCOpts{History: true})
	if err != nil || len(items) != 1 || !slices.Equal(st.pruned, []string{"a", "b"}) {
		t.Fatalf("pass = %+v, %v; pruned %v", items, err, st.pruned)
	}
	off := NewGC(&fakeGCStore{prunable: st.prunable}, nil, GCConfig{Retain: -1, Now: func() time.Time { return now }})
	if items, err := off.Collect(t.Context(), GCOpts{History: true}); err != nil || len(items) != 0 {
		t.Fatalf("retain none = %+v, %v", items, err)
	}
}

// TestGCLoopPrunesOnTheLeaderOnly: every node collects its disk each
// pass; only the leader prunes the store.
func TestGCLoopPrunesOnTheLeaderOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		st, disk := gcFixture(now)
		st.prunable = []store.PrunableTask{{ID: "h", State: store.StateSucceeded, FinishedAt: now.Add(-200 * 24 * time.Hour), Events: 1}}
		var l leader
		g := NewGC(st, disk, GCConfig{Every: time.Hour, Leads: l.leads})
		g.Start(t.Context())
		defer g.Stop()

		time.Sleep(time.Hour + time.Second) // fake time: one pass as a follower
		synctest.Wait()
		disk.mu.Lock()
		collected := len(disk.collected)
		disk.mu.Unlock()
		if collected == 0 || st.prunes != 0 || l.asks.Load() != 1 {
			t.Fatalf("follower: collected %d, prunes %d, asks %d; want >0, 0, 1", collected, st.prunes, l.asks.Load())
		}
		l.yes.Store(true)
		time.Sleep(time.Hour)
		synctest.Wait()
		if st.prunes != 1 || !slices.Equal(st.pruned, []string{"h"}) {
			t.Fatalf("leader: prunes %d, pruned %v", st.prunes, st.pruned)
		}
	})
}
