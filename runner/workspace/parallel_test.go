package workspace_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"reasonix/runner/workspace"
)

// TestConcurrentTasksOfOneRepository: six tasks of one repository, on two
// Managers sharing it (two nodes on one repository directory), are
// prepared and finished all at once. Each writes a file of its own and
// changes the same line of a shared file. Every task ends on its own
// branch with exactly its own change (nothing merged, nothing lost), the
// base is untouched, and `git fsck --strict` finds the repository clean.
func TestConcurrentTasksOfOneRepository(t *testing.T) {
	f := newFixture(t, false)
	other := f.managerAt(filepath.Join(t.TempDir(), "node-b"))
	repo := f.repo(map[string]string{"shared.txt": "one line\n"})
	base := f.git(repo, "rev-parse", "main")
	ctx := testCtx(t)
	spec := &workspace.Spec{Name: "app", Repo: repo}

	const n = 6
	ids := make([]string, n)
	managers := make([]*workspace.Manager, n)
	for i := range n {
		ids[i] = fmt.Sprintf("par-%d", i)
		managers[i] = []*workspace.Manager{f.m, other}[i%2]
	}
	// all runs fn for every task at once, from a common start.
	all := func(fn func(i int) error) {
		t.Helper()
		start := make(chan struct{})
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = fn(i)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("task %s: %v", ids[i], err)
			}
		}
	}

	wss := make([]*workspace.Workspace, n)
	all(func(i int) error {
		ws, err := managers[i].Prepare(ctx, ids[i], spec)
		wss[i] = ws
		return err
	})
	for i, ws := range wss {
		write(t, filepath.Join(ws.Dir, "shared.txt"), "task "+ids[i]+" was here\n")
		write(t, filepath.Join(ws.Dir, ids[i]+".txt"), ids[i]+"\n")
	}
	results := make([]workspace.Result, n)
	all(func(i int) error {
		res, err := managers[i].Finish(ctx, wss[i], "task "+ids[i])
		results[i] = res
		return err
	})

	for i, res := range results {
		branch := "refs/heads/" + workspace.BranchFor(ids[i])
		if !res.Changed || res.Commit == "" {
			t.Errorf("task %s: result %+v, want a change", ids[i], res)
			continue
		}
		if head := f.git(repo, "rev-parse", branch); head != res.Commit {
			t.Errorf("task %s: branch at %s, result says %s", ids[i], head, res.Commit)
		}
		if got := f.git(repo, "show", branch+":shared.txt"); got != "task "+ids[i]+" was here" {
			t.Errorf("task %s: shared.txt on its branch = %q", ids[i], got)
		}
		files := f.git(repo, "ls-tree", "--name-only", branch)
		if files != ids[i]+".txt\nshared.txt" {
			t.Errorf("task %s: files on its branch = %q, want its own and shared.txt", ids[i], files)
		}
		if parent := f.git(repo, "rev-parse", branch+"^"); parent != base {
			t.Errorf("task %s: branch starts at %s, want the base %s", ids[i], parent, base)
		}
		if exists(wss[i].Dir) {
			t.Errorf("task %s: worktree %s left behind", ids[i], wss[i].Dir)
		}
	}
	if head := f.git(repo, "rev-parse", "main"); head != base {
		t.Errorf("main moved to %s", head)
	}
	if wt := f.git(repo, "worktree", "list", "--porcelain"); wt != "worktree "+repo+"\nHEAD "+base+"\nbranch refs/heads/main" {
		t.Errorf("worktrees left registered:\n%s", wt)
	}
	f.git(repo, "fsck", "--strict", "--no-dangling")
}

// managerAt builds a Manager with its own root, sharing the fixture's
// environment: another node.
func (f *fixture) managerAt(root string) *workspace.Manager {
	f.t.Helper()
	m, err := workspace.New(workspace.Config{Root: root, Env: f.env})
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return m
}
