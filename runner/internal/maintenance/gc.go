package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"reasonix/runner/store"
)

// Garbage collection ([runner] keep_worktrees, [runner] retain, `reasonix
// gc`): the one place that decides what of a finished task may be removed
// and says why. Two parts:
//
//   - this node's disk: a finished task's scratch directory, worktree and
//     local branch, once the task ended longer than keep_worktrees ago.
//     Each node holds its own directories, so every node runs this part.
//   - the shared store: a finished task's per-step history, once it ended
//     longer than retain ago. The leader alone runs this part on schedule.
//
// Never removed: a worktree with changes no commit holds, a branch with
// commits that are in neither its base nor what was published (the only
// copy of that work), a worktree whose git links changed (a person should
// look), anything of a task that is not finished or that this store does
// not know.

// Defaults of the [runner] keys and of the loop.
const (
	DefaultKeepWorktrees = 7 * 24 * time.Hour
	DefaultRetain        = 90 * 24 * time.Hour
	// GCEvery is how often the loop collects; what it removes ages in
	// days.
	GCEvery = time.Hour
	// gcPage is how many tasks one store read or prune covers.
	gcPage = 200
)

// What a GCItem is about.
const (
	GCScratch  = "scratch"  // a scratch directory
	GCWorktree = "worktree" // a git worktree
	GCBranch   = "branch"   // the local reasonix/<task> branch
	GCHistory  = "history"  // events, messages, tool journal
)

// GCItem is one thing garbage collection removed (or, in a dry run, would
// remove) or kept, and why.
type GCItem struct {
	Task   string
	What   string // GCScratch, GCWorktree, GCBranch or GCHistory
	Remove bool   // false: kept, and Reason says why
	Reason string
	Rows   int64 // GCHistory: the rows deleted
	Bytes  int64 // GCHistory: about what their contents took
	// Err is set when a removal was due and failed; the item is then
	// kept.
	Err string
}

// GCStore is what garbage collection needs of the store.
type GCStore interface {
	GCTasks(ctx context.Context, ids []string) (map[string]store.GCTask, error)
	PrunableTasks(ctx context.Context, before time.Time, after *store.PrunableTask, limit int) ([]store.PrunableTask, error)
	PruneTasks(ctx context.Context, ids []string, before time.Time) ([]string, int64, error)
}

// Leftover is what this node's disk still holds of one task.
type Leftover struct {
	Task     string
	Worktree bool
	Scratch  bool
	Record   bool // the task's branch may still exist: Inspect says
}

// Holding is what a task holds in git (see workspace.Holding).
type Holding struct {
	Worktree    bool
	Dirty       bool
	Tampered    string
	Branch      bool
	Head        string
	Unpublished int
}

// Collection is what to remove of one task.
type Collection struct {
	Worktree, Branch, Scratch bool
	Head                      string // the branch's commit as Inspect saw it
	// Record drops the task's record once neither worktree nor branch is
	// left (Branch drops it too).
	Record bool
}

// GCDisk is this node's task directories.
type GCDisk interface {
	Leftovers(ctx context.Context) ([]Leftover, error)
	// Inspect reports what the task holds in git; published is the commit
	// pushed to a forge ("" none).
	Inspect(ctx context.Context, taskID, published string) (Holding, error)
	Collect(ctx context.Context, taskID string, c Collection) error
}

// GCConfig configures a GC.
type GCConfig struct {
	// KeepWorktrees is how long after its end a task's directories stay;
	// 0 is DefaultKeepWorktrees, negative never removes them.
	KeepWorktrees time.Duration
	// Retain is how long after its end a task's history stays; 0 is
	// DefaultRetain, negative never prunes it.
	Retain time.Duration
	// Every is how often the loop collects; 0 is GCEvery.
	Every time.Duration
	// Leads gates the store part of a scheduled pass; required for Start.
	Leads Leads
	Now   func() time.Time
	Log   *slog.Logger
}

// GC is garbage collection: Collect runs one pass (for `reasonix gc` and
// the loop), Start runs the loop.
type GC struct {
	cfg  GCConfig
	st   GCStore
	disk GCDisk // nil: this node keeps no task directories
	loop loop

	// kept remembers the branches (without a worktree) found holding
	// unpublished commits, by task, with the end and published commit
	// they were judged by: such a branch only changes when its task is
	// continued (a new end) or published, so later passes repeat the
	// verdict instead of running git again for every one of them.
	mu   sync.Mutex
	kept map[string]keptBranch
}

// keptBranch is a remembered verdict: the items it gave, valid while the
// task's end and published commit are as they were.
type keptBranch struct {
	finished  time.Time
	published string
	items     []GCItem
}

// NewGC builds a GC over st and disk (nil: only the store part).
func NewGC(st GCStore, disk GCDisk, cfg GCConfig) *GC {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	if cfg.KeepWorktrees == 0 {
		cfg.KeepWorktrees = DefaultKeepWorktrees
	}
	if cfg.Retain == 0 {
		cfg.Retain = DefaultRetain
	}
	if cfg.Every <= 0 {
		cfg.Every = GCEvery
	}
	return &GC{cfg: cfg, st: st, disk: disk, kept: map[string]keptBranch{}}
}

// Start collects every Every until ctx ends or Stop: this node's disk on
// every node, the store's history on the leader only.
func (g *GC) Start(ctx context.Context) {
	g.loop.start(ctx, g.cfg.Every, func(ctx context.Context) {
		items, err := g.Collect(ctx, GCOpts{History: g.cfg.Leads(ctx)})
		if err != nil && ctx.Err() == nil {
			g.cfg.Log.Warn("runner: garbage collection", "err", err)
		}
		var removed int
		for _, it := range items {
			if it.Remove && it.Err == "" {
				removed++
			}
			if it.Err != "" {
				g.cfg.Log.Warn("runner: garbage collection could not remove", "task", it.Task, "what", it.What, "err", it.Err)
			}
		}
		if removed > 0 {
			g.cfg.Log.Info("runner: garbage collected", "removed", removed)
		}
	})
}

// Stop ends the loop and waits for a pass under way.
func (g *GC) Stop() { g.loop.stop() }

// GCOpts is one pass's options.
type GCOpts struct {
	// DryRun lists what the pass would remove and keep, removing nothing.
	DryRun bool
	// History includes the store part (the leader's on schedule; always
	// on request).
	History bool
}

// Collect runs one pass and returns what it removed (or would) and what
// it kept and why: removals first as they happened, a kept item where
// the policy refused one. A failed removal is an item with Err; err is
// only for a pass that could not look at all.
func (g *GC) Collect(ctx context.Context, o GCOpts) ([]GCItem, error) {
	var items []GCItem
	var errs []error
	if g.disk != nil && g.cfg.KeepWorktrees > 0 {
		got, err := g.collectDisk(ctx, o.DryRun)
		items = append(items, got...)
		errs = append(errs, err)
	}
	if o.History && g.cfg.Retain > 0 {
		got, err := g.collectHistory(ctx, o.DryRun)
		items = append(items, got...)
		errs = append(errs, err)
	}
	return items, errors.Join(errs...)
}

func (g *GC) collectDisk(ctx context.Context, dry bool) ([]GCItem, error) {
	left, err := g.disk.Leftovers(ctx)
	if err != nil || len(left) == 0 {
		return nil, err
	}
	ids := make([]string, len(left))
	for i, l := range left {
		ids[i] = l.Task
	}
	tasks, err := g.st.GCTasks(ctx, ids)
	if err != nil {
		return nil, err
	}
	g.forget(left)
	cut := g.cfg.Now().Add(-g.cfg.KeepWorktrees)
	var items []GCItem
	for _, l := range left {
		if ctx.Err() != nil {
			return items, ctx.Err()
		}
		t, known := tasks[l.Task]
		if !known {
			// Another store's task, or a row deleted by hand: not ours to
			// judge.
			for _, what := range l.things() {
				items = append(items, GCItem{Task: l.Task, What: what, Reason: "no such task in the store"})
			}
			continue
		}
		if !t.State.Terminal() || t.FinishedAt.IsZero() || !t.FinishedAt.Before(cut) {
			continue // not finished, or not long enough ago: nothing to say
		}
		items = append(items, g.collectTask(ctx, l, t, dry)...)
	}
	return items, nil
}

// forget drops the remembered verdicts of tasks the disk no longer holds.
func (g *GC) forget(left []Leftover) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.kept) == 0 {
		return
	}
	held := make(map[string]bool, len(left))
	for _, l := range left {
		held[l.Task] = true
	}
	for id := range g.kept {
		if !held[id] {
			delete(g.kept, id)
		}
	}
}

// things is what l shows of a task that cannot be judged.
func (l Leftover) things() []string {
	var out []string
	if l.Scratch {
		out = append(out, GCScratch)
	}
	if l.Worktree {
		out = append(out, GCWorktree)
	}
	if l.Record && !l.Worktree {
		out = append(out, GCBranch)
	}
	return out
}

// collectTask decides, for a task finished before keep_worktrees, what of
// it goes.
func (g *GC) collectTask(ctx context.Context, l Leftover, t store.GCTask, dry bool) []GCItem {
	var items []GCItem
	var c Collection
	ended := "finished " + t.FinishedAt.UTC().Format(time.DateOnly)
	if l.Scratch {
		c.Scratch = true
		items = append(items, GCItem{Task: l.Task, What: GCScratch, Remove: true, Reason: "scratch directory of a task " + ended})
	}
	if !l.Worktree && !l.Scratch && l.Record {
		g.mu.Lock()
		k, ok := g.kept[l.Task]
		g.mu.Unlock()
		if ok && k.finished.Equal(t.FinishedAt) && k.published == t.Published {
			return append(items, k.items...)
		}
	}
	if l.Worktree || l.Record {
		h, err := g.disk.Inspect(ctx, l.Task, t.Published)
		switch {
		case err != nil:
			for _, what := range (Leftover{Worktree: l.Worktree, Record: l.Record}).things() {
				items = append(items, GCItem{Task: l.Task, What: what, Reason: "could not be inspected; see the service log"})
			}
			g.cfg.Log.Warn("runner: garbage collection could not inspect a task's git", "task", l.Task, "err", err)
		case h.Tampered != "":
			items = append(items, GCItem{Task: l.Task, What: GCWorktree, Reason: "its git links changed (" + h.Tampered + "); left for a person to look at"})
		case h.Dirty:
			items = append(items, GCItem{Task: l.Task, What: GCWorktree, Reason: "uncommitted changes"})
			if h.Branch {
				items = append(items, GCItem{Task: l.Task, What: GCBranch, Reason: "its worktree has uncommitted changes"})
			}
		case h.Unpublished > 0:
			why := fmt.Sprintf("%d commit(s) not published", h.Unpublished)
			if h.Worktree {
				items = append(items, GCItem{Task: l.Task, What: GCWorktree, Reason: why})
			} else if !l.Scratch {
				g.mu.Lock()
				g.kept[l.Task] = keptBranch{finished: t.FinishedAt, published: t.Published,
					items: []GCItem{{Task: l.Task, What: GCBranch, Reason: why}}}
				g.mu.Unlock()
			}
			items = append(items, GCItem{Task: l.Task, What: GCBranch, Reason: why})
		case !h.Worktree && !h.Branch:
			c.Record = true // what it described is gone: nothing to list
		default:
			why := "no changes; " + ended
			if t.Published != "" {
				why = "published (" + short(t.Published) + "); " + ended
			}
			if h.Worktree {
				c.Worktree = true
				items = append(items, GCItem{Task: l.Task, What: GCWorktree, Remove: true, Reason: "clean, " + why})
			}
			if h.Branch {
				c.Branch, c.Head = true, h.Head
				items = append(items, GCItem{Task: l.Task, What: GCBranch, Remove: true, Reason: why})
			}
		}
	}
	if dry || c == (Collection{}) {
		return items
	}
	// The task may have been continued since the pass read it (a reply
	// in its thread): then its directory is in use again. Asking once
	// more right before removing leaves only a moment for that.
	if now, err := g.st.GCTasks(ctx, []string{l.Task}); err != nil || !now[l.Task].FinishedAt.Equal(t.FinishedAt) || !now[l.Task].State.Terminal() {
		return nil
	}
	if err := g.disk.Collect(ctx, l.Task, c); err != nil {
		g.cfg.Log.Warn("runner: garbage collection could not remove", "task", l.Task, "err", err)
		for i := range items {
			if items[i].Remove {
				items[i].Remove, items[i].Err = false, "removal failed; see the service log"
			}
		}
	}
	return items
}

func (g *GC) collectHistory(ctx context.Context, dry bool) ([]GCItem, error) {
	cut := g.cfg.Now().Add(-g.cfg.Retain)
	var (
		items []GCItem
		after *store.PrunableTask
	)
	for {
		page, err := g.st.PrunableTasks(ctx, cut, after, gcPage)
		if err != nil || len(page) == 0 {
			return items, err
		}
		after = &page[len(page)-1]
		ids := make([]string, len(page))
		for i, p := range page {
			ids[i] = p.ID
		}
		pruned := map[string]bool{}
		if !dry {
			done, _, err := g.st.PruneTasks(ctx, ids, cut)
			if err != nil {
				return items, err
			}
			for _, id := range done {
				pruned[id] = true
			}
		}
		for _, p := range page {
			if p.Rows() == 0 || (!dry && !pruned[p.ID]) {
				continue // nothing to say: empty, or continued meanwhile
			}
			items = append(items, GCItem{Task: p.ID, What: GCHistory, Remove: true, Rows: p.Rows(), Bytes: p.Bytes,
				Reason: fmt.Sprintf("%d events, %d messages, %d tool calls, %d other; %s finished %s", p.Events, p.Messages, p.Journal, p.Other,
					p.State, p.FinishedAt.UTC().Format(time.DateOnly))})
		}
		if len(page) < gcPage {
			return items, nil
		}
	}
}

// short is a commit's first 12 characters.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
