package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/config"
	"reasonix/runner/apitype"
	"reasonix/runner/internal/maintenance"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// workspaceCollector is the part of Workspaces garbage collection reaches:
// what this node's disk holds of each task and removing it. The two
// implementations here have it; a Workspaces without it is left alone.
type workspaceCollector interface {
	Leftovers(ctx context.Context) ([]maintenance.Leftover, error)
	Inspect(ctx context.Context, taskID, published string) (maintenance.Holding, error)
	Collect(ctx context.Context, taskID string, c maintenance.Collection) error
}

// MayCollectGarbage reports whether p may run `reasonix gc`: admins only,
// since it removes what every principal's tasks left.
func (p Principal) MayCollectGarbage() error {
	if p.Role != store.RoleAdmin {
		return failf(ErrForbidden, "%s may not collect garbage (role %s); an admin token is needed", p.ID, p.Role)
	}
	return nil
}

// GC runs garbage collection now on this node (see maintenance.GC): its
// own finished tasks' directories and branches past [runner]
// keep_worktrees, and the store's history past [runner] retain. With
// dryRun it removes nothing and says what it would. Admins only.
func (s *Service) GC(ctx context.Context, p Principal, dryRun bool) (apitype.GCReport, error) {
	if err := p.MayCollectGarbage(); err != nil {
		return apitype.GCReport{}, err
	}
	items, err := s.newGC().Collect(ctx, maintenance.GCOpts{DryRun: dryRun, History: true})
	if err != nil {
		ref := newRef()
		s.log.Error("runner: garbage collection", "ref", ref, "err", err)
		if len(items) == 0 {
			return apitype.GCReport{}, fmt.Errorf("runner: garbage collection (ref %s): %w", ref, err)
		}
	}
	rep := apitype.GCReport{DryRun: dryRun, Node: s.node, Items: make([]apitype.GCItem, 0, len(items))}
	for _, it := range items {
		v := apitype.GCItem{TaskID: it.Task, What: it.What, Action: apitype.GCKeep, Reason: it.Reason, Rows: it.Rows, Bytes: it.Bytes, Error: it.Err}
		if it.Remove {
			v.Action = apitype.GCRemove
			rep.Removed++
			rep.Bytes += it.Bytes
		} else {
			rep.Kept++
		}
		rep.Items = append(rep.Items, v)
	}
	return rep, nil
}

// newGC builds garbage collection over this node's store and workspaces
// with the configured retentions.
func (s *Service) newGC() *maintenance.GC {
	var disk maintenance.GCDisk
	if c, ok := s.cfg.Workspaces.(workspaceCollector); ok {
		disk = c
	}
	return maintenance.NewGC(s.st, disk, maintenance.GCConfig{
		KeepWorktrees: retention(s.set.Runner.KeepWorktrees),
		Retain:        retention(s.set.Runner.Retain),
		Every:         s.cfg.GCInterval,
		Leads:         s.leads,
		Now:           s.now,
		Log:           s.log,
	})
}

// retention maps a configured retention onto maintenance's: negative for
// "none", 0 for its default.
func retention(r config.Retention) time.Duration {
	if r.None() {
		return -1
	}
	return r.Duration()
}

// Leftovers, Inspect and Collect let garbage collection reach a
// workspace manager's directories and branches.
func (g gitWorkspaces) Leftovers(context.Context) ([]maintenance.Leftover, error) {
	left, err := g.m.Leftovers()
	if err != nil {
		return nil, err
	}
	out := make([]maintenance.Leftover, len(left))
	for i, l := range left {
		out[i] = maintenance.Leftover{Task: l.Task, Worktree: l.Worktree, Scratch: l.Scratch, Record: l.Record}
	}
	return out, nil
}

func (g gitWorkspaces) Inspect(ctx context.Context, taskID, published string) (maintenance.Holding, error) {
	h, err := g.m.Inspect(ctx, taskID, published)
	return maintenance.Holding(h), err
}

func (g gitWorkspaces) Collect(ctx context.Context, taskID string, c maintenance.Collection) error {
	return g.m.Collect(ctx, taskID, workspace.Collection{Worktree: c.Worktree, Branch: c.Branch, Head: c.Head, Scratch: c.Scratch, Record: c.Record})
}

var _ workspaceCollector = gitWorkspaces{}

// Leftovers, Inspect and Collect let garbage collection remove the
// scratch directories of a node without a workspace manager.
func (s scratchWorkspaces) Leftovers(context.Context) ([]maintenance.Leftover, error) {
	entries, err := os.ReadDir(s.root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runner: list scratch directories: %w", err)
	}
	var out []maintenance.Leftover
	for _, e := range entries {
		if e.IsDir() && scratchName(e.Name()) {
			out = append(out, maintenance.Leftover{Task: e.Name(), Scratch: true})
		}
	}
	return out, nil
}

func (scratchWorkspaces) Inspect(context.Context, string, string) (maintenance.Holding, error) {
	return maintenance.Holding{}, nil
}

func (s scratchWorkspaces) Collect(_ context.Context, taskID string, c maintenance.Collection) error {
	if !c.Scratch || !scratchName(taskID) {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(s.root, taskID)); err != nil {
		return fmt.Errorf("runner: remove scratch directory of %s: %w", taskID, err)
	}
	return nil
}

var _ workspaceCollector = scratchWorkspaces{}

// scratchName reports whether name could be a task's directory: one plain
// path element, nothing hidden.
func scratchName(name string) bool {
	return name != "" && filepath.Base(name) == name && filepath.IsLocal(name) && !strings.HasPrefix(name, ".")
}
