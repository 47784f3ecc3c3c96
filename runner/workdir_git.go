package runner

import (
	"context"
	"fmt"
	"io"

	"reasonix/runner/workspace"
)

// NewWorkspaces adapts a workspace manager (git worktrees per task, scratch
// directories for tasks without a workspace) to Workspaces.
func NewWorkspaces(m *workspace.Manager) Workspaces { return gitWorkspaces{m: m} }

type gitWorkspaces struct{ m *workspace.Manager }

func (g gitWorkspaces) ScratchDir(taskID string) string { return g.m.ScratchDir(taskID) }

func (g gitWorkspaces) Prepare(ctx context.Context, taskID string, spec *WorkspaceSpec) (*Workdir, error) {
	var ws *workspace.Spec
	if spec != nil {
		ws = &workspace.Spec{Name: spec.Name, Repo: spec.Repo, Base: spec.Base, Setup: spec.Setup}
	}
	w, err := g.m.Prepare(ctx, taskID, ws)
	if err != nil {
		return nil, fmt.Errorf("runner: workspace: %w", err)
	}
	return &Workdir{Dir: w.Dir, Branch: w.Branch, Base: w.Base, Spec: w.Spec, Fresh: w.Fresh, Handle: w}, nil
}

func (g gitWorkspaces) Finish(ctx context.Context, w *Workdir, message string) (WorkResult, error) {
	ws, ok := w.Handle.(*workspace.Workspace)
	if !ok {
		ws = &workspace.Workspace{Dir: w.Dir, Branch: w.Branch, Base: w.Base, Spec: w.Spec}
	}
	r, err := g.m.Finish(ctx, ws, message)
	if err != nil {
		return WorkResult{}, fmt.Errorf("runner: workspace: %w", err)
	}
	return WorkResult{Branch: r.Branch, Commit: r.Commit, DiffStat: r.DiffStat, Changed: r.Changed}, nil
}

// Release checkpoints the task's worktree for another node (see
// workspace.Manager.Release).
func (g gitWorkspaces) Release(ctx context.Context, w *Workdir, message string) error {
	ws, ok := w.Handle.(*workspace.Workspace)
	if !ok {
		ws = &workspace.Workspace{Dir: w.Dir, Branch: w.Branch, Base: w.Base, Spec: w.Spec}
	}
	if err := g.m.Release(ctx, ws, message); err != nil {
		return fmt.Errorf("runner: workspace: %w", err)
	}
	return nil
}

var _ WorkspaceReleaser = gitWorkspaces{}

// GitDir and Diff make the task branches readable (see WorkspaceBranches).
func (g gitWorkspaces) GitDir(taskID string) (string, error) { return g.m.GitDir(taskID) }

func (g gitWorkspaces) Diff(ctx context.Context, taskID string, w io.Writer) error {
	return g.m.Diff(ctx, taskID, w)
}

var _ WorkspaceBranches = gitWorkspaces{}
