package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner/workspace"
)

func TestInvalidTaskIDIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	for _, id := range []string{"", "..", "../escape", "a/b", "a.b", "x y", "tâche", strings.Repeat("a", 129), "ok\n"} {
		for _, spec := range []*workspace.Spec{nil, {Name: "app", Repo: repo}} {
			if _, err := f.m.Prepare(ctx, id, spec); !errors.Is(err, workspace.ErrInvalid) {
				t.Errorf("Prepare(%q, spec=%v) = %v, want ErrInvalid", id, spec != nil, err)
			}
		}
	}
	if f.git(repo, "branch", "--list", "reasonix/*") != "" {
		t.Error("a refused task created a branch")
	}
	for _, sub := range []string{"scratch", "worktrees"} {
		if entries, _ := os.ReadDir(filepath.Join(f.m.Root(), sub)); len(entries) != 0 {
			t.Errorf("a refused task created %s/%s", sub, entries[0].Name())
		}
	}
	if exists(filepath.Join(filepath.Dir(f.m.Root()), "escape")) {
		t.Error("a task path escaped the root")
	}
}

func TestFinishRefusesAWorkspaceOutsideTheRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	victim := t.TempDir()
	write(t, filepath.Join(victim, "precious"), "x")
	for _, ws := range []*workspace.Workspace{
		{Dir: victim},
		{Dir: filepath.Join(f.m.Root(), "scratch", "..", "..")},
		{Dir: victim, Branch: "reasonix/t1"},
		{Dir: filepath.Join(f.m.Root(), "worktrees", "t1"), Branch: "main"},
	} {
		if _, err := f.m.Finish(ctx, ws, "x"); !errors.Is(err, workspace.ErrInvalid) {
			t.Errorf("Finish(%+v) = %v, want ErrInvalid", ws, err)
		}
		if err := f.m.Remove(ctx, ws); !errors.Is(err, workspace.ErrInvalid) {
			t.Errorf("Remove(%+v) = %v, want ErrInvalid", ws, err)
		}
	}
	if !exists(filepath.Join(victim, "precious")) {
		t.Fatal("a directory outside the root was deleted")
	}
	_, err := f.m.Finish(ctx, &workspace.Workspace{Dir: filepath.Join(f.m.Root(), "worktrees", "t1"), Branch: "reasonix/t1"}, "x")
	if !errors.Is(err, workspace.ErrNoRecord) {
		t.Errorf("Finish of a never-prepared worktree = %v, want ErrNoRecord", err)
	}
}

func TestMissingBaseSaysWhatToSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	f.git(repo, "branch", "develop")
	_, err := f.m.Prepare(ctx, "nb", &workspace.Spec{Name: "app", Repo: repo, Base: "release"})
	if !errors.Is(err, workspace.ErrBaseNotFound) {
		t.Fatalf("err = %v, want ErrBaseNotFound", err)
	}
	for _, want := range []string{`base "release" not found`, repo, `set base = "..."`, `"app"`, "develop, main"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if exists(filepath.Join(f.m.Root(), "worktrees", "nb")) {
		t.Error("a worktree was created without a base")
	}

	bare, _ := f.origin()
	_, err = f.m.Prepare(ctx, "nb2", &workspace.Spec{Name: "svc", Repo: "file://" + bare, Base: "trunk"})
	if !errors.Is(err, workspace.ErrBaseNotFound) || !strings.Contains(err.Error(), "(branches: main)") {
		t.Errorf("URL workspace, missing base: %v", err)
	}
}

func TestBaseMayBeATagOrCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, work := f.origin()
	first := f.git(work, "rev-parse", "HEAD")
	f.git(work, "tag", "v1")
	write(t, filepath.Join(work, "a.txt"), "v2\n")
	f.git(work, "commit", "--quiet", "-am", "v2")
	f.git(work, "push", "--quiet", "--tags", "origin", "main")
	for i, base := range []string{"v1", first} {
		for j, repo := range []string{work, "file://" + bare} {
			ws, err := f.m.Prepare(ctx, "b"+strconv.Itoa(i*2+j), &workspace.Spec{Name: "svc", Repo: repo, Base: base})
			if err != nil {
				t.Fatalf("base %s, repo %s: %v", base, repo, err)
			}
			if ws.Base != first {
				t.Errorf("base %s, repo %s: started from %s, want %s", base, repo, ws.Base, first)
			}
		}
	}
}

func TestBadSpecs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	notRepo := t.TempDir()
	for _, tc := range []struct {
		spec workspace.Spec
		want string
	}{
		{workspace.Spec{Repo: repo}, "has no name"},
		{workspace.Spec{Name: "../x", Repo: repo}, "invalid workspace name"},
		{workspace.Spec{Name: "app"}, "repo is empty"},
		{workspace.Spec{Name: "app", Repo: repo, Base: "--upload-pack=x"}, "is not a ref"},
		{workspace.Spec{Name: "app", Repo: repo, Setup: []string{" "}}, "setup[0]"},
		{workspace.Spec{Name: "app", Repo: "ext::sh -c touch% /tmp/pwned"}, "unsupported transport"},
		{workspace.Spec{Name: "app", Repo: "https://user:s3cret@example.com/x.git", Base: "-x"}, "is not a ref"},
	} {
		_, err := f.m.Prepare(ctx, "bad", &tc.spec)
		if !errors.Is(err, workspace.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spec %+v: %v, want ErrInvalid with %q", tc.spec, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks a credential: %v", err)
		}
	}
	_, err := f.m.Prepare(ctx, "bad", &workspace.Spec{Name: "app", Repo: notRepo})
	if err == nil || !strings.Contains(err.Error(), "is not a git repository") {
		t.Errorf("not a repository: %v", err)
	}
	_, err = f.m.Prepare(ctx, "bad", &workspace.Spec{Name: "app", Repo: filepath.Join(notRepo, "missing")})
	if err == nil || !strings.Contains(err.Error(), "check repo") {
		t.Errorf("missing repository: %v", err)
	}
}

func TestFetchErrorRedactsCredentials(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	// Nothing listens on port 1 of loopback: the fetch fails at once.
	_, err := f.m.Prepare(ctx, "cred", &workspace.Spec{Name: "svc", Repo: "http://bob:hunter2@127.0.0.1:1/x.git"})
	if err == nil {
		t.Fatal("fetch from a closed port succeeded")
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "http://***@127.0.0.1:1/x.git") {
		t.Errorf("error = %v; want the URL with its credentials redacted", err)
	}
}

func TestSetupTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	env, _ := hermeticEnv(t)
	f := newFixture(t, false)
	m, err := workspace.New(workspace.Config{Root: f.root, Env: env, SetupTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	_, err = m.Prepare(testCtx(t), "slow", &workspace.Spec{Name: "app", Repo: repo, Setup: []string{
		"sleep 60 & echo $! > " + pidFile + "; echo started; wait",
	}})
	var se *workspace.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "timed out") || se.Output != "started" {
		t.Fatalf("err = %v, want a setup timeout quoting the output", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Prepare took %v after a 300ms setup timeout", d)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(read(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("the background sleep (pid %d) survived the timeout", pid)
	}
}

// alive reports whether pid runs: it exists and is not a zombie waiting for
// a parent (here init) to reap it.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill -0
	}
	// The state follows the parenthesised command name.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(string(rest)), "Z")
}

func TestCancelledContextStopsSetup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	ctx, cancel := context.WithCancel(testCtx(t))
	ready := filepath.Join(t.TempDir(), "ready")
	errc := make(chan error, 1)
	go func() {
		_, err := f.m.Prepare(ctx, "cancel", &workspace.Spec{Name: "app", Repo: repo, Setup: []string{"touch " + ready + "; sleep 60"}})
		errc <- err
	}()
	eventually.True(t, 0, func() bool {
		select {
		case err := <-errc:
			t.Fatalf("Prepare returned before setup started: %v", err)
		default:
		}
		return exists(ready)
	}, "the setup step never started")
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if exists(filepath.Join(f.m.Root(), "worktrees", "cancel")) {
		t.Error("a cancelled Prepare left its worktree")
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  workspace.Config
		want string
	}{
		{workspace.Config{}, "Root is empty"},
		{workspace.Config{Root: "relative/dir"}, "not absolute"},
		{workspace.Config{Root: t.TempDir(), SetupTimeout: -time.Second}, "negative"},
	} {
		if _, err := workspace.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := workspace.New(workspace.Config{Root: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "git not found") {
		t.Errorf("New without git = %v", err)
	}
}
