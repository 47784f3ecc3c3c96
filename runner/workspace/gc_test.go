package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"reasonix/runner/workspace"
)

// TestInspectAndCollect: Leftovers finds what the root holds; Inspect
// tells a clean worktree from one with uncommitted work, counts the
// commits neither the base nor the published commit holds, and Collect
// removes the worktree, the branch (only while it is where it was seen)
// and the record, and a scratch directory.
// A task's own commit sits on its worktree's detached HEAD until Finish
// names it on the branch: a task that ended without Finish still holds
// unpublished work there, and gc must keep it.
func TestInspectCountsCommitsOnTheWorktreesHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	ws, err := f.m.Prepare(ctx, "self", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "a.txt"), "mine\n")
	f.git(ws.Dir, "commit", "-q", "-am", "the task's own commit")
	h, err := f.m.Inspect(ctx, "self", "")
	if err != nil || h.Dirty || !h.Branch || h.Unpublished != 1 {
		t.Fatalf("inspect = %+v, %v; want 1 unpublished commit on the worktree's HEAD", h, err)
	}
	if h.Head == f.git(ws.Dir, "rev-parse", "HEAD") {
		t.Fatal("the branch moved with the task's own commit")
	}
}

func TestInspectAndCollect(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true) // Keep: the worktrees stay after Finish, as with keep_workspaces
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n", ".gitignore": "*.log\n"})
	spec := &workspace.Spec{Name: "app", Repo: repo}

	idle, err := f.m.Prepare(ctx, "idle", spec)
	if err != nil {
		t.Fatal(err)
	}
	work, err := f.m.Prepare(ctx, "work", spec)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := f.m.Prepare(ctx, "scr", nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(scratch.Dir, "notes.txt"), "x\n")
	write(t, filepath.Join(work.Dir, "a.txt"), "changed\n")
	if _, err := f.m.Finish(ctx, idle, ""); err != nil {
		t.Fatal(err)
	}
	res, err := f.m.Finish(ctx, work, "")
	if err != nil || !res.Changed {
		t.Fatalf("finish = %+v, %v", res, err)
	}

	left, err := f.m.Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	want := []workspace.Leftover{{Task: "idle", Worktree: true, Record: true}, {Task: "scr", Scratch: true},
		{Task: "work", Worktree: true, Record: true}}
	if len(left) != len(want) {
		t.Fatalf("leftovers = %+v", left)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("leftovers = %+v; want %+v", left, want)
		}
	}

	// No changes: nothing unpublished.
	h, err := f.m.Inspect(ctx, "idle", "")
	if err != nil || !h.Worktree || h.Dirty || !h.Branch || h.Unpublished != 0 {
		t.Fatalf("idle = %+v, %v", h, err)
	}
	// One commit, not published; then published.
	h, err = f.m.Inspect(ctx, "work", "")
	if err != nil || h.Dirty || h.Unpublished != 1 || h.Head != res.Commit {
		t.Fatalf("work unpublished = %+v, %v", h, err)
	}
	if h, err = f.m.Inspect(ctx, "work", res.Commit); err != nil || h.Unpublished != 0 {
		t.Fatalf("work published = %+v, %v", h, err)
	}
	// Uncommitted work: a new file, an ignored one does not count.
	write(t, filepath.Join(idle.Dir, "build.log"), "ignored\n")
	if h, err = f.m.Inspect(ctx, "idle", ""); err != nil || h.Dirty {
		t.Fatalf("idle with an ignored file = %+v, %v", h, err)
	}
	write(t, filepath.Join(idle.Dir, "new.txt"), "uncommitted\n")
	if h, err = f.m.Inspect(ctx, "idle", ""); err != nil || !h.Dirty {
		t.Fatalf("idle with a new file = %+v, %v", h, err)
	}

	// A branch that moved since it was looked at stays.
	stale := f.git(repo, "rev-parse", "main")
	if err := f.m.Collect(ctx, "work", workspace.Collection{Branch: true, Head: stale}); err == nil {
		t.Fatal("collect with a stale head deleted the branch")
	}
	if f.git(repo, "rev-parse", "reasonix/work") != res.Commit {
		t.Fatal("the branch moved")
	}
	if err := f.m.Collect(ctx, "work", workspace.Collection{Worktree: true, Branch: true, Head: res.Commit}); err != nil {
		t.Fatal(err)
	}
	if exists(work.Dir) || exists(filepath.Join(f.root, "meta", "work.json")) {
		t.Fatal("the worktree or the record is still there")
	}
	if out := f.git(repo, "branch", "--list", "reasonix/work"); out != "" {
		t.Fatalf("branch still there: %q", out)
	}
	if _, err := f.m.Inspect(ctx, "work", ""); !errors.Is(err, workspace.ErrNoRecord) {
		t.Fatalf("inspect after collect: %v", err)
	}
	if err := f.m.Collect(ctx, "scr", workspace.Collection{Scratch: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratch.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch still there: %v", err)
	}
	left, err = f.m.Leftovers()
	if err != nil || len(left) != 1 || left[0].Task != "idle" {
		t.Fatalf("leftovers after collecting = %+v, %v", left, err)
	}
}

// TestInspectTampered: a worktree whose .git link was rewritten is
// reported, not inspected with git.
func TestInspectTampered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	ws, err := f.m.Prepare(ctx, "tam", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, ".git"), "gitdir: /elsewhere\n")
	h, err := f.m.Inspect(ctx, "tam", "")
	if err != nil || h.Tampered == "" || h.Dirty {
		t.Fatalf("tampered = %+v, %v", h, err)
	}
}
