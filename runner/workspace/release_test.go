package workspace_test

import (
	"path/filepath"
	"testing"

	"reasonix/runner/workspace"
)

// otherNode is a Manager with its own root (another machine's data dir)
// and the fixture's git environment.
func (f *fixture) otherNode() *workspace.Manager {
	f.t.Helper()
	m, err := workspace.New(workspace.Config{Root: filepath.Join(f.t.TempDir(), "node-b"), Env: f.env})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// A task released on one node continues on another with the first node's
// uncommitted changes, for a repository both reach by path and for a URL
// (through a checkpoint pushed to the remote); a second move carries the
// second node's changes back.
func TestReleaseCarriesChangesToAnotherNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, _ := f.origin()
	specs := map[string]*workspace.Spec{
		"path": {Name: "local", Repo: f.repo(map[string]string{"a.txt": "v1\n"})},
		"url":  {Name: "remote", Repo: "file://" + bare},
	}
	b := f.otherNode()
	for kind, spec := range specs {
		id := "move-" + kind
		wa, err := f.m.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		write(t, filepath.Join(wa.Dir, "from-a.txt"), "a\n")
		if err := f.m.Release(ctx, wa, ""); err != nil {
			t.Fatal(kind, err)
		}
		if exists(wa.Dir) {
			t.Errorf("%s: the released worktree is still there", kind)
		}
		wb, err := b.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		if got := read(t, filepath.Join(wb.Dir, "from-a.txt")); got != "a\n" {
			t.Fatalf("%s: node B sees %q", kind, got)
		}
		if wb.Base != wa.Base {
			t.Errorf("%s: base moved from %s to %s", kind, wa.Base, wb.Base)
		}
		write(t, filepath.Join(wb.Dir, "from-b.txt"), "b\n")
		if err := b.Release(ctx, wb, ""); err != nil {
			t.Fatal(kind, err)
		}
		again, err := f.m.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		if read(t, filepath.Join(again.Dir, "from-a.txt")) != "a\n" || read(t, filepath.Join(again.Dir, "from-b.txt")) != "b\n" {
			t.Fatalf("%s: back on node A the changes are not all there", kind)
		}
		res, err := f.m.Finish(ctx, again, "done")
		if err != nil || !res.Changed {
			t.Fatalf("%s: finish %+v %v", kind, res, err)
		}
	}
}

// A node that died with the task branch checked out does not keep another
// node from continuing the task from its last checkpoint.
func TestPrepareTakesOverABranchADeadNodeHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	spec := &workspace.Spec{Name: "local", Repo: f.repo(map[string]string{"a.txt": "v1\n"})}
	if _, err := f.m.Prepare(ctx, "dead", spec); err != nil {
		t.Fatal(err)
	}
	wb, err := f.otherNode().Prepare(ctx, "dead", spec)
	if err != nil {
		t.Fatalf("taking over a branch a dead node holds: %v", err)
	}
	if read(t, filepath.Join(wb.Dir, "a.txt")) != "v1\n" {
		t.Fatal("wrong checkout")
	}
}
