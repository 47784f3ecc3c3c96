package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/workspace"
)

// countingSpec returns a spec whose setup appends a line to a counter file
// outside the worktree, so a test can tell how often setup ran.
func countingSpec(t *testing.T, repo string) (*workspace.Spec, func() int) {
	counter := filepath.Join(t.TempDir(), "setup-runs")
	spec := &workspace.Spec{Name: "app", Repo: repo, Setup: []string{"echo run >> " + counter}}
	return spec, func() int {
		b, err := os.ReadFile(counter)
		if err != nil {
			return 0
		}
		return strings.Count(string(b), "run")
	}
}

func TestPrepareAfterCrashReopensTheWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	spec, runs := countingSpec(t, repo)
	ws, err := f.m.Prepare(ctx, "resume", spec)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "a.txt"), "half done\n")
	write(t, filepath.Join(ws.Dir, "new.txt"), "untracked\n")

	// The process dies; a new Manager on the same root takes over.
	restarted := f.manager(workspace.Config{})
	again, err := restarted.Prepare(ctx, "resume", spec)
	if err != nil {
		t.Fatal(err)
	}
	want := *ws
	want.Fresh = false // reopened, uncommitted changes included
	if !ws.Fresh || *again != want {
		t.Errorf("reopened workspace = %+v, want %+v (first Prepare: %+v)", again, want, ws)
	}
	if read(t, filepath.Join(again.Dir, "a.txt")) != "half done\n" || !exists(filepath.Join(again.Dir, "new.txt")) {
		t.Error("uncommitted changes were lost on reopen")
	}
	if n := runs(); n != 1 {
		t.Errorf("setup ran %d times, want once (not again when reopening)", n)
	}
	res, err := restarted.Finish(ctx, again, "resumed")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.git(repo, "show", "--name-status", "--format=", res.Commit); got != "M\ta.txt\nA\tnew.txt" {
		t.Errorf("commit after resume holds:\n%s", got)
	}
}

func TestPrepareRecreatesABrokenWorktree(t *testing.T) {
	t.Parallel()
	for name, breakIt := range map[string]func(t *testing.T, f *fixture, repo, dir string){
		"git link deleted": func(t *testing.T, _ *fixture, _, dir string) {
			if err := os.Remove(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
		},
		"metadata pruned": func(t *testing.T, f *fixture, repo, _ string) {
			if err := os.RemoveAll(filepath.Join(repo, ".git", "worktrees")); err != nil {
				t.Fatal(err)
			}
		},
		"other branch checked out": func(t *testing.T, f *fixture, _, dir string) {
			f.git(dir, "checkout", "--quiet", "-b", "elsewhere")
		},
		"setup never finished": func(t *testing.T, f *fixture, _, _ string) {
			rec := filepath.Join(f.m.Root(), "meta", "broken.json")
			b, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			write(t, rec, strings.Replace(string(b), `"setup_done":true`, `"setup_done":false`, 1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			ctx := testCtx(t)
			repo := f.repo(map[string]string{"a.txt": "a\n"})
			spec, runs := countingSpec(t, repo)
			ws, err := f.m.Prepare(ctx, "broken", spec)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(ws.Dir, "stale.txt"), "x")
			breakIt(t, f, repo, ws.Dir)

			again, err := f.manager(workspace.Config{}).Prepare(ctx, "broken", spec)
			if err != nil {
				t.Fatal(err)
			}
			if again.Dir != ws.Dir || again.Base != ws.Base {
				t.Errorf("recreated = %+v, want same dir and base as %+v", again, ws)
			}
			if exists(filepath.Join(again.Dir, "stale.txt")) {
				t.Error("the broken worktree's files survived: it was not recreated")
			}
			// Detached at the task branch: the service moves the branch.
			if head, tip := f.git(again.Dir, "rev-parse", "HEAD"), f.git(repo, "rev-parse", "reasonix/broken"); head != tip {
				t.Errorf("recreated worktree is at %s, the task branch at %s", head, tip)
			}
			if n := runs(); n != 2 {
				t.Errorf("setup ran %d times, want 2 (again for the new worktree)", n)
			}
		})
	}
}

func TestContinuingAFinishedTaskKeepsItsBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	spec := &workspace.Spec{Name: "app", Repo: repo}
	ws, err := f.m.Prepare(ctx, "cont", spec)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "first.txt"), "1\n")
	if _, err := f.m.Finish(ctx, ws, "first"); err != nil {
		t.Fatal(err)
	}
	// main moves on meanwhile; the continued task stays on its branch.
	write(t, filepath.Join(repo, "main-only.txt"), "m\n")
	f.git(repo, "add", "--all")
	f.git(repo, "commit", "--quiet", "-m", "main moves")

	again, err := f.m.Prepare(ctx, "cont", spec)
	if err != nil {
		t.Fatal(err)
	}
	if again.Base != ws.Base || !exists(filepath.Join(again.Dir, "first.txt")) || exists(filepath.Join(again.Dir, "main-only.txt")) {
		t.Fatalf("continued workspace %+v does not continue the task branch", again)
	}
	write(t, filepath.Join(again.Dir, "second.txt"), "2\n")
	res, err := f.m.Finish(ctx, again, "second")
	if err != nil {
		t.Fatal(err)
	}
	if n := f.git(repo, "rev-list", "--count", ws.Base+"..reasonix/cont"); n != "2" {
		t.Errorf("branch has %s commits, want 2", n)
	}
	if !strings.Contains(res.DiffStat, "first.txt") || !strings.Contains(res.DiffStat, "second.txt") || strings.Contains(res.DiffStat, "main-only") {
		t.Errorf("diff stat should cover the whole task against its base:\n%s", res.DiffStat)
	}
}

func TestATaskKeepsItsWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	if _, err := f.m.Prepare(ctx, "one", &workspace.Spec{Name: "app", Repo: repo}); err != nil {
		t.Fatal(err)
	}
	other := f.repo(map[string]string{"b.txt": "b\n"})
	_, err := f.m.Prepare(ctx, "one", &workspace.Spec{Name: "lib", Repo: other})
	if err == nil || !strings.Contains(err.Error(), `workspace "app"`) {
		t.Errorf("Prepare with another workspace for the same task: %v", err)
	}
}
