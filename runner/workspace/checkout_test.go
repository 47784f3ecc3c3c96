package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/workspace"
)

// checkoutFixture is a repository with a linked worktree on reasonix/mine.
func checkoutFixture(t *testing.T) (f *fixture, src, wt string) {
	f = newFixture(t, false)
	src = f.repo(map[string]string{"a": "a\n"})
	wt = filepath.Join(t.TempDir(), "wt")
	f.git(src, "worktree", "add", "--quiet", "-b", "reasonix/mine", wt)
	// DetachCheckout compares the worktree's path with git's record of it.
	if p, err := filepath.EvalSymlinks(wt); err == nil {
		wt = p
	}
	return f, src, wt
}

func TestDetachCheckoutLeavesOtherCheckoutsAlone(t *testing.T) {
	f, src, wt := checkoutFixture(t)
	other := filepath.Join(t.TempDir(), "other")
	f.git(src, "worktree", "add", "--quiet", "-b", "feature", other)
	for _, dir := range []string{src, other, t.TempDir()} {
		co, err := workspace.DetachCheckout(testCtx(t), dir)
		if err != nil || co != nil {
			t.Errorf("%s: DetachCheckout = %v, %v; want nil, nil", dir, co, err)
		}
	}
	// A .git file pointing at another worktree's directory is not believed.
	write(t, filepath.Join(other, ".git"), "gitdir: "+filepath.Join(src, ".git", "worktrees", filepath.Base(wt))+"\n")
	if co, err := workspace.DetachCheckout(testCtx(t), other); err != nil || co != nil {
		t.Errorf("a borrowed .git file: DetachCheckout = %v, %v; want nil, nil", co, err)
	}
}

func TestCheckoutMovesItsBranchToTheRunsCommit(t *testing.T) {
	f, src, wt := checkoutFixture(t)
	co, err := workspace.DetachCheckout(testCtx(t), wt)
	if err != nil || co == nil {
		t.Fatalf("DetachCheckout = %v, %v", co, err)
	}
	if co.Branch() != "reasonix/mine" {
		t.Errorf("Branch = %q", co.Branch())
	}
	if _, err := os.Stat(filepath.Join(src, ".git", "worktrees", filepath.Base(wt))); err != nil {
		t.Fatal(err)
	}
	head := read(t, filepath.Join(src, ".git", "worktrees", filepath.Base(wt), "HEAD"))
	if strings.HasPrefix(head, "ref:") {
		t.Fatalf("HEAD is still on a branch: %q", head)
	}
	// The run's commit moves only HEAD.
	write(t, filepath.Join(wt, "b"), "b\n")
	f.git(wt, "add", "b")
	f.git(wt, "commit", "--quiet", "-m", "run")
	commit := f.git(wt, "rev-parse", "HEAD")
	if got := f.git(src, "rev-parse", "reasonix/mine"); got == commit {
		t.Fatalf("the branch moved during the run")
	}
	got, err := co.Restore(testCtx(t))
	if err != nil || got != commit {
		t.Fatalf("Restore = %s, %v; want %s", got, err, commit)
	}
	if b := f.git(src, "rev-parse", "reasonix/mine"); b != commit {
		t.Errorf("reasonix/mine is at %s, want %s", b, commit)
	}
	if ref := f.git(wt, "symbolic-ref", "HEAD"); ref != "refs/heads/reasonix/mine" {
		t.Errorf("HEAD is %q after Restore", ref)
	}
}

// TestCheckoutRestoreRefusesWhatTheRunWrote: HEAD is the run's to write,
// so what Restore reads there is checked, and the branch moves only from
// the commit it had when the run began.
func TestCheckoutRestoreRefusesWhatTheRunWrote(t *testing.T) {
	for name, tc := range map[string]struct {
		head  func(f *fixture, src, wt string) string // the HEAD file the run leaves
		moved bool                                    // someone else moved the branch meanwhile
		want  string
	}{
		"another branch":   {head: func(*fixture, string, string) string { return "ref: refs/heads/main\n" }, want: "left"},
		"not a commit":     {head: func(*fixture, string, string) string { return "not a sha\n" }, want: "not a commit"},
		"a missing commit": {head: func(*fixture, string, string) string { return strings.Repeat("ab", 20) + "\n" }, want: "not a commit of the repository"},
		"moved meanwhile":  {moved: true, want: "move reasonix/mine"},
	} {
		t.Run(name, func(t *testing.T) {
			f, src, wt := checkoutFixture(t)
			start := f.git(src, "rev-parse", "reasonix/mine")
			co, err := workspace.DetachCheckout(testCtx(t), wt)
			if err != nil || co == nil {
				t.Fatalf("DetachCheckout = %v, %v", co, err)
			}
			write(t, filepath.Join(wt, "b"), "b\n")
			f.git(wt, "add", "b")
			f.git(wt, "commit", "--quiet", "-m", "run")
			want := start
			if tc.moved {
				f.git(src, "commit", "--quiet", "--allow-empty", "-m", "elsewhere")
				f.git(src, "branch", "-f", "reasonix/mine", "main")
				want = f.git(src, "rev-parse", "main")
			}
			if tc.head != nil {
				write(t, filepath.Join(src, ".git", "worktrees", filepath.Base(wt), "HEAD"), tc.head(f, src, wt))
			}
			if _, err := co.Restore(testCtx(t)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Restore error = %v, want one containing %q", err, tc.want)
			}
			if got := f.git(src, "rev-parse", "reasonix/mine"); got != want {
				t.Errorf("reasonix/mine is at %s, want %s", got, want)
			}
		})
	}
}
