package runner

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"reasonix/runner/apitype"
)

// WorkspaceSpec is a configured [[workspaces]] entry, as the runner hands it
// to Workspaces.Prepare.
type WorkspaceSpec struct {
	Name  string
	Repo  string
	Base  string
	Setup []string
}

// Workdir is a prepared task directory.
type Workdir struct {
	Dir    string // absolute; the agent's workspace root
	Branch string // the task's branch; "" for a scratch directory
	Base   string
	Spec   string // the workspace name; "" for a scratch directory
	// Fresh: the worktree was made anew from the task branch as last
	// committed, so changes an earlier run did not checkpoint are not in
	// it (see lostChanges). False for a reopened worktree and a scratch
	// directory.
	Fresh bool
	// Handle is the implementation's own value, passed back to Finish.
	Handle any
}

// WorkResult is what Finish reports about a task's changes.
type WorkResult struct {
	Branch   string
	Commit   string
	DiffStat string
	Changed  bool
}

// Workspaces prepares and finishes task directories. NewWorkspaces adapts a
// *workspace.Manager; implementations must be safe for concurrent use.
type Workspaces interface {
	// Prepare returns the task's directory; spec nil means a scratch
	// directory. Preparing a task again (a resumed run) reuses its
	// directory.
	Prepare(ctx context.Context, taskID string, spec *WorkspaceSpec) (*Workdir, error)
	// Finish commits the task's changes with message and reports them.
	Finish(ctx context.Context, w *Workdir, message string) (WorkResult, error)
}

// WorkspaceBranches is the optional part of Workspaces that reaches a
// finished task's branch: the repository it is in (which publishing pushes
// from) and its diff against its base (`tasks diff`). Without it, a
// workspace's tasks neither publish nor show a diff.
type WorkspaceBranches interface {
	GitDir(taskID string) (string, error)
	Diff(ctx context.Context, taskID string, w io.Writer) error
}

// ScratchFinder is the optional part of Workspaces that says where a
// task's scratch directory is without preparing it: a node hands a
// finished task's directory over to the node that continues the task
// (cluster.Scratch). Without it, such a task continues without its files.
type ScratchFinder interface {
	ScratchDir(taskID string) string
}

// scratchWorkspaces gives each task an empty directory under root and keeps
// it (there is no branch to keep the work otherwise).
type scratchWorkspaces struct{ root string }

func (s scratchWorkspaces) Prepare(_ context.Context, taskID string, spec *WorkspaceSpec) (*Workdir, error) {
	if spec != nil {
		return nil, fmt.Errorf("runner: workspace %q needs a workspace manager; only scratch directories are available", spec.Name)
	}
	dir := filepath.Join(s.root, taskID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("runner: scratch directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return &Workdir{Dir: dir}, nil
}

func (scratchWorkspaces) Finish(context.Context, *Workdir, string) (WorkResult, error) {
	return WorkResult{}, nil
}

func (s scratchWorkspaces) ScratchDir(taskID string) string { return filepath.Join(s.root, taskID) }

// WorkspaceList is the configured workspaces as clients see them: names,
// repositories without credentials, base branches and where results go.
func (s *Service) WorkspaceList() []apitype.Workspace {
	out := make([]apitype.Workspace, 0, len(s.set.Workspaces))
	for _, w := range s.set.Workspaces {
		v := apitype.Workspace{Name: w.Name, Repo: withoutUserinfo(w.Repo), Base: w.Base}
		if w.Publish.Enabled() {
			v.Publish = w.Publish.Forge
		}
		out = append(out, v)
	}
	return out
}

// withoutUserinfo drops a URL's user and password; a path or an scp-style
// address (git@host:path, whose user is no secret) is returned as it is.
func withoutUserinfo(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" || u.User == nil {
		return repo
	}
	u.User = nil
	return u.String()
}
