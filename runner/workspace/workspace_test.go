package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/workspace"
)

func TestScratchDirectory(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		f := newFixture(t, keep)
		ctx := testCtx(t)
		ws, err := f.m.Prepare(ctx, "task-1", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(f.m.Root(), "scratch", "task-1")
		if ws.Dir != want || ws.Branch != "" || ws.Base != "" || ws.Spec != "" {
			t.Fatalf("scratch workspace = %+v, want Dir %s and nothing else", ws, want)
		}
		entries, err := os.ReadDir(ws.Dir)
		if err != nil || len(entries) != 0 {
			t.Fatalf("scratch dir: %v entries, err %v; want empty", len(entries), err)
		}
		write(t, filepath.Join(ws.Dir, "out.txt"), "x")
		again, err := f.m.Prepare(ctx, "task-1", nil)
		if err != nil || !exists(filepath.Join(again.Dir, "out.txt")) {
			t.Fatalf("reopened scratch lost its file (err %v)", err)
		}
		res, err := f.m.Finish(ctx, ws, "done")
		if err != nil {
			t.Fatal(err)
		}
		if res != (workspace.Result{}) {
			t.Errorf("scratch result = %+v, want zero", res)
		}
		if exists(ws.Dir) != keep {
			t.Errorf("keep=%v: scratch dir exists=%v after Finish", keep, exists(ws.Dir))
		}
		if err := f.m.Remove(ctx, ws); err != nil || exists(ws.Dir) {
			t.Errorf("Remove: err %v, still exists %v", err, exists(ws.Dir))
		}
	}
}

func TestFinishCommitsExactlyTheTaskChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{
		"keep.txt": "same\n", "edit.txt": "old\n", "gone.txt": "bye\n", ".gitignore": "*.log\n",
	})
	base := f.git(repo, "rev-parse", "main")
	ws, err := f.m.Prepare(ctx, "t42", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if ws.Branch != "reasonix/t42" || ws.Base != base || ws.Spec != "app" || ws.Dir != filepath.Join(f.m.Root(), "worktrees", "t42") {
		t.Fatalf("workspace = %+v, want branch reasonix/t42 from %s", ws, base)
	}
	if read(t, filepath.Join(ws.Dir, "edit.txt")) != "old\n" {
		t.Fatal("worktree does not hold the base's files")
	}
	write(t, filepath.Join(ws.Dir, "edit.txt"), "new\n")
	write(t, filepath.Join(ws.Dir, "sub", "added.txt"), "hello\n")
	write(t, filepath.Join(ws.Dir, "debug.log"), "ignored\n")
	if err := os.Remove(filepath.Join(ws.Dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}

	res, err := f.m.Finish(ctx, ws, "Fix the widget\n\n# keep this line")
	if err != nil {
		t.Fatal(err)
	}
	tip := f.git(repo, "rev-parse", "reasonix/t42")
	if !res.Changed || res.Commit != tip || res.Branch != "reasonix/t42" {
		t.Fatalf("result = %+v, want changed with commit %s", res, tip)
	}
	if n := f.git(repo, "rev-list", "--count", "main..reasonix/t42"); n != "1" {
		t.Errorf("branch has %s commits on top of main, want 1", n)
	}
	if parent := f.git(repo, "rev-parse", tip+"^"); parent != base {
		t.Errorf("commit parent = %s, want base %s", parent, base)
	}
	if got, want := f.git(repo, "show", "--name-status", "--format=", tip), "M\tedit.txt\nD\tgone.txt\nA\tsub/added.txt"; got != want {
		t.Errorf("commit changes:\n%s\nwant:\n%s", got, want)
	}
	if got := f.git(repo, "show", "--no-patch", "--format=%an <%ae>|%cn <%ce>", tip); got != "Reasonix <reasonix@localhost>|Reasonix <reasonix@localhost>" {
		t.Errorf("identity = %q", got)
	}
	if got := f.git(repo, "show", "--no-patch", "--format=%B", tip); got != "Fix the widget\n\n# keep this line" {
		t.Errorf("message = %q", got)
	}
	for _, want := range []string{"edit.txt", "gone.txt", "sub/added.txt", "3 files changed"} {
		if !strings.Contains(res.DiffStat, want) {
			t.Errorf("diff stat lacks %q:\n%s", want, res.DiffStat)
		}
	}
	if strings.Contains(res.DiffStat, "debug.log") {
		t.Errorf("diff stat includes an ignored file:\n%s", res.DiffStat)
	}
	if exists(ws.Dir) {
		t.Error("worktree still exists after Finish without Keep")
	}
	if list := f.git(repo, "worktree", "list", "--porcelain"); strings.Contains(list, "t42") {
		t.Errorf("git still lists the removed worktree:\n%s", list)
	}
	if f.git(repo, "status", "--porcelain") != "" {
		t.Error("the user's own checkout was modified")
	}

	// Finish again (a runner retrying after a crash) reports the same.
	again, err := f.m.Finish(ctx, ws, "again")
	if err != nil || again != res {
		t.Errorf("repeated Finish = %+v, %v; want %+v", again, err, res)
	}
}

func TestFinishWithoutChangesMakesNoCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n", ".gitignore": "tmp/\n"})
	ws, err := f.m.Prepare(ctx, "idle", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "tmp", "cache"), "ignored only\n")
	res, err := f.m.Finish(ctx, ws, "nothing")
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || res.Commit != "" || res.DiffStat != "" || res.Branch != "reasonix/idle" {
		t.Errorf("result = %+v, want unchanged", res)
	}
	if tip := f.git(repo, "rev-parse", "reasonix/idle"); tip != ws.Base {
		t.Errorf("branch moved to %s without changes", tip)
	}
}

func TestRepositoryIdentityWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	f.git(repo, "config", "user.name", "Repo Bot")
	f.git(repo, "config", "user.email", "bot@example.com")
	ws, err := f.m.Prepare(ctx, "ident", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "a.txt"), "b\n")
	res, err := f.m.Finish(ctx, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.git(repo, "show", "--no-patch", "--format=%an <%ae>|%s", res.Commit); got != "Repo Bot <bot@example.com>|reasonix: task ident" {
		t.Errorf("commit = %q, want the repo's identity and the default message", got)
	}
}

func TestKeepThenRemove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	ws, err := f.m.Prepare(ctx, "kept", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "a.txt"), "changed\n")
	if _, err := f.m.Finish(ctx, ws, "change"); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(ws.Dir, "a.txt")) != "changed\n" {
		t.Fatal("Keep: worktree gone after Finish")
	}
	if err := f.m.Remove(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if exists(ws.Dir) {
		t.Error("Remove left the worktree")
	}
	if list := f.git(repo, "worktree", "list", "--porcelain"); strings.Contains(list, "kept") {
		t.Errorf("Remove did not prune git's metadata:\n%s", list)
	}
	if f.git(repo, "show", "reasonix/kept:a.txt") != "changed" {
		t.Error("the branch did not survive Remove")
	}
	if err := f.m.Remove(ctx, ws); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestSetupRunsInTheWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n", ".gitignore": "*.out\n"})
	spec := &workspace.Spec{Name: "app", Repo: repo, Setup: []string{
		"pwd > where.out",
		"echo \"$REASONIX_TASK_ID\" > id.out && cat a.txt >> id.out",
	}}
	ws, err := f.m.Prepare(ctx, "s1", spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(read(t, filepath.Join(ws.Dir, "where.out"))); got != ws.Dir {
		t.Errorf("setup ran in %q, want %q", got, ws.Dir)
	}
	if got := read(t, filepath.Join(ws.Dir, "id.out")); got != "s1\na\n" {
		t.Errorf("second setup command wrote %q", got)
	}
}

func TestFailingSetupQuotesItsOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	spec := &workspace.Spec{Name: "app", Repo: repo, Setup: []string{
		"echo fine",
		"echo installing; echo 'npm ERR! missing package.json' >&2; exit 3",
		"touch never-runs",
	}}
	_, err := f.m.Prepare(ctx, "s2", spec)
	var se *workspace.SetupError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *SetupError", err)
	}
	if se.Command != spec.Setup[1] || !strings.Contains(se.Output, "npm ERR! missing package.json") || !strings.Contains(se.Output, "installing") {
		t.Errorf("SetupError = %+v", se)
	}
	if msg := err.Error(); !strings.Contains(msg, "exit 3") || !strings.Contains(msg, "npm ERR!") || !strings.Contains(msg, `"app"`) {
		t.Errorf("message does not quote the command and output: %s", msg)
	}
	dir := filepath.Join(f.m.Root(), "worktrees", "s2")
	if exists(dir) {
		t.Error("a worktree whose setup failed was left behind")
	}
	if list := f.git(repo, "worktree", "list", "--porcelain"); strings.Contains(list, "s2") {
		t.Errorf("git still lists the failed worktree:\n%s", list)
	}
}
