package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/workspace"
)

// tripwire is a script that records it ran by creating marker: what a
// task would name as core.fsmonitor, a hook or a filter.
func tripwire(t *testing.T) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	script, marker = filepath.Join(dir, "tripwire.sh"), filepath.Join(dir, "RAN")
	// A filter must pass its input through; the rest ignore output.
	write(t, script, "#!/bin/sh\necho ran >> "+marker+"\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

// TestFinishRefusesATamperedWorktree rewrites, as a task could from inside
// its sandbox, each file that links its worktree to the repository, to
// point git at config the task wrote. Finish must refuse with
// ErrTampered, name what changed, commit nothing and run nothing.
func TestFinishRefusesATamperedWorktree(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		what   string
		tamper func(t *testing.T, f *fixture, ws *workspace.Workspace, private, evil string)
	}{
		".git file": {".git file", func(t *testing.T, _ *fixture, ws *workspace.Workspace, _, evil string) {
			write(t, filepath.Join(ws.Dir, ".git"), "gitdir: "+evil+"\n")
		}},
		"commondir": {"commondir", func(t *testing.T, _ *fixture, _ *workspace.Workspace, private, evil string) {
			write(t, filepath.Join(private, "commondir"), evil+"\n")
		}},
		"gitdir": {"gitdir", func(t *testing.T, _ *fixture, _ *workspace.Workspace, private, evil string) {
			write(t, filepath.Join(private, "gitdir"), filepath.Join(evil, "x", ".git")+"\n")
		}},
		"config.worktree": {"config.worktree", func(t *testing.T, f *fixture, _ *workspace.Workspace, private, _ string) {
			script, _ := tripwire(t)
			write(t, filepath.Join(private, "config.worktree"), "[core]\n\tfsmonitor = "+script+"\n")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			ctx := testCtx(t)
			repo := f.repo(map[string]string{"a.txt": "a\n"})
			ws, err := f.m.Prepare(ctx, "t1", &workspace.Spec{Name: "app", Repo: repo})
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(ws.Dir, "a.txt"), "changed\n")
			script, marker := tripwire(t)
			// The task's own git directory: a full repository whose HEAD
			// is the task branch, with config that runs the tripwire.
			evil := filepath.Join(ws.Dir, "evil.git")
			f.git(ws.Dir, "init", "--quiet", "--bare", evil)
			f.git(evil, "config", "core.bare", "false")
			f.git(evil, "config", "core.fsmonitor", script)
			f.git(evil, "config", "core.hooksPath", filepath.Dir(script))
			f.git(evil, "symbolic-ref", "HEAD", "refs/heads/"+ws.Branch)
			private := filepath.Join(repo, ".git", "worktrees", "t1")
			tip := f.git(repo, "rev-parse", ws.Branch)
			tc.tamper(t, f, ws, private, evil)

			_, err = f.m.Finish(ctx, ws, "done")
			if !errors.Is(err, workspace.ErrTampered) {
				t.Fatalf("Finish = %v, want ErrTampered", err)
			}
			te, ok := errors.AsType[*workspace.TamperedError](err)
			if !ok || te.Task != "t1" || !strings.Contains(te.What, tc.what) {
				t.Errorf("error = %#v, want a *TamperedError naming %s", te, tc.what)
			}
			if exists(marker) {
				t.Error("the service ran a command the task's config named")
			}
			if got := f.git(repo, "rev-parse", ws.Branch); got != tip {
				t.Error("the tampered worktree's changes were committed")
			}
			// Reopening the task does not replace the evidence silently.
			if _, err := f.manager(workspace.Config{}).Prepare(ctx, "t1", &workspace.Spec{Name: "app", Repo: repo}); !errors.Is(err, workspace.ErrTampered) {
				t.Errorf("Prepare of the tampered worktree = %v, want ErrTampered", err)
			}
			if exists(marker) {
				t.Error("reopening ran a command the task's config named")
			}
		})
	}
}

// TestServiceGitRunsNothingConfigNames: the repository's own config (here
// as its owner could have set it, with extensions.worktreeConfig on) and
// a nested repository the task made and staged name an fsmonitor, a
// hooks directory and a clean filter; finishing the task commits its work
// and runs none of them.
func TestServiceGitRunsNothingConfigNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	script, marker := tripwire(t)
	hooks := filepath.Join(t.TempDir(), "hooks")
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction", "post-index-change"} {
		write(t, filepath.Join(hooks, h), "#!/bin/sh\n"+script+" </dev/null\n")
		if err := os.Chmod(filepath.Join(hooks, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.git(repo, "config", "extensions.worktreeConfig", "true")
	f.git(repo, "config", "core.fsmonitor", script)
	f.git(repo, "config", "core.hooksPath", hooks)
	ws, err := f.m.Prepare(ctx, "t2", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if exists(marker) {
		t.Fatal("Prepare ran a hook or fsmonitor the repository's config names")
	}

	// A nested repository whose own config the task wrote, staged as a
	// gitlink (the task may write its index), then changed.
	nested := filepath.Join(ws.Dir, "vendor", "lib")
	f.git(ws.Dir, "init", "--quiet", nested)
	write(t, filepath.Join(nested, "f.txt"), "x\n")
	write(t, filepath.Join(nested, ".gitattributes"), "* filter=evil\n")
	f.git(nested, "add", "f.txt")
	f.git(nested, "commit", "--quiet", "-m", "nested")
	f.git(nested, "config", "core.fsmonitor", script)
	f.git(nested, "config", "filter.evil.clean", script)
	f.git(nested, "config", "filter.evil.required", "true")
	f.git(ws.Dir, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "update-index", "--add", "vendor/lib")
	write(t, filepath.Join(nested, "f.txt"), "y\n") // same size: git must hash it to see
	write(t, filepath.Join(ws.Dir, "b.txt"), "b\n")
	if err := os.Remove(filepath.Join(ws.Dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	os.Remove(marker)

	res, err := f.m.Finish(ctx, ws, "done")
	if err != nil {
		t.Fatal(err)
	}
	if exists(marker) {
		t.Error("finishing the task ran a command a config names")
	}
	if got, want := f.git(repo, "-c", "core.fsmonitor=false", "show", "--name-status", "--format=", res.Commit), "D\ta.txt\nA\tb.txt\nA\tvendor/lib"; got != want {
		t.Errorf("the commit holds:\n%s\nwant:\n%s", got, want)
	}
}

// TestSafeDirectoryOfTheOperatorStillCounts: the service's git reads no
// global config, but a safe.directory the operator set there (for a
// repository another user owns) is carried over.
func TestSafeDirectoryOfTheOperatorStillCounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the repository to another user")
	}
	f := newFixture(t, false)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	if err := filepath.Walk(repo, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 4242, 4242)
	}); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[safe]\n\tdirectory = "+repo+"\n")
	m, err := workspace.New(workspace.Config{Root: filepath.Join(t.TempDir(), "ws"), Env: append(append([]string(nil), f.env...), "GIT_CONFIG_GLOBAL="+global)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Prepare(testCtx(t), "t1", &workspace.Spec{Name: "w", Repo: repo}); err != nil {
		t.Fatalf("Prepare of a repository the operator marked safe: %v", err)
	}
}
