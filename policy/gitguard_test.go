package policy

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
)

// runGuarded runs script through c.Shell() as the bash tool would: from
// the restricted thread when the shell starts commands itself, else
// through the argv it wraps.
func runGuarded(t *testing.T, c *Confinement, script string) (string, error) {
	t.Helper()
	var out strings.Builder
	if st, ok := c.Shell().(agent.ShellStarter); ok && viaThread {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = c.Root()
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := st.StartShell(cmd); err != nil {
			return "", err
		}
		err := cmd.Wait()
		return out.String(), err
	}
	argv, err := c.Shell().WrapShell(c.Root(), script)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Root()
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// TestRunOnACheckoutCannotPlantWhatGitRuns is `reasonix run --auto` on a
// user's own checkout (the .git directory inside the workspace): a bash
// command plants a pre-commit hook and core.fsmonitor, and the file tools
// try the same. The model's own commits keep working, what it planted is
// gone before its next command and after the run, and the owner's next
// plain `git commit` runs nothing.
func TestRunOnACheckoutCannotPlantWhatGitRuns(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	eachSandbox(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		gitIn(t, ws, "init", "-q")
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, ws, "add", "a.txt")
		gitIn(t, ws, "commit", "-qm", "first")
		config, _ := os.ReadFile(filepath.Join(ws, ".git", "config"))
		marker := filepath.Join(outside, "PWNED")
		script := filepath.Join(ws, "tool.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho ran >> "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}

		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".git/info/attributes", ".git/commondir", ".git"} {
			if _, err := c.WritePath(p); !errors.Is(err, errGitControl) {
				t.Errorf("%s: WritePath(%s) = %v, want a refusal", kind, p, err)
			}
		}
		if _, err := c.WritePath("b.txt"); err != nil {
			t.Errorf("%s: WritePath(b.txt) = %v", kind, err)
		}

		// One command plants and commits: what it planted runs inside the
		// sandbox at most (and under bubblewrap cannot be written at all).
		plant := "cp tool.sh .git/hooks/pre-commit; git config core.fsmonitor " + script + "; mkdir -p .git/info; echo '* filter=x' > .git/info/attributes; echo " + outside + " > .git/commondir; true"
		if out, err := runGuarded(t, c, plant); err != nil {
			t.Fatalf("%s: planting: %v: %s", kind, err, out)
		}
		os.Remove(marker)
		id := "-c user.name=t -c user.email=t@example.com"
		// The next command finds nothing planted (the hook would run in the
		// sandbox, where it could not leave a trace outside: look instead).
		if out, err := runGuarded(t, c, "test ! -e .git/hooks/pre-commit && ! git config core.fsmonitor && test ! -e .git/commondir && "+
			"echo b > b.txt && git add b.txt && git "+id+" commit -qm task"); err != nil {
			t.Fatalf("%s: the next command saw the plant, or the model's own commit failed: %v: %s", kind, err, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the next command's commit ran the planted hook or fsmonitor", kind)
		}
		if got := gitIn(t, ws, "log", "-1", "--format=%s"); got != "task" {
			t.Errorf("%s: last commit = %q, want the task's", kind, got)
		}

		// Planted again at the end of the run: closing the sandbox undoes it.
		if out, err := runGuarded(t, c, plant); err != nil {
			t.Fatalf("%s: planting: %v: %s", kind, err, out)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if now, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(now) != string(config) {
			t.Errorf("%s: .git/config after the run:\n%s", kind, now)
		}
		for _, p := range []string{".git/hooks/pre-commit", ".git/info/attributes", ".git/commondir"} {
			if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
				t.Errorf("%s: %s survived the run", kind, p)
			}
		}
		os.Remove(marker)
		gitIn(t, ws, "commit", "-q", "--allow-empty", "-m", "owner")
		gitIn(t, ws, "status", "--porcelain")
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the owner's commit or status ran what the task planted", kind)
		}
	})
}

// TestGitGuardLeavesTaskWorktreesToTheRunner: a worktree on a task branch
// is the runner's to check (it refuses a tampered one and must see the
// change), so the guard only keeps the file tools off its links; a user's
// own linked worktree is repaired.
func TestGitGuardLeavesTaskWorktreesToTheRunner(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	src, wt, own := filepath.Join(base, "src"), filepath.Join(base, "wt"), filepath.Join(base, "own")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, src, "init", "-q")
	gitIn(t, src, "commit", "-q", "--allow-empty", "-m", "first")
	gitIn(t, src, "worktree", "add", "-q", "-b", "reasonix/t1", wt)
	gitIn(t, src, "worktree", "add", "-q", "-b", "feature", own)
	if g := newGitGuard(wt); g == nil || !g.passive || !g.protects(filepath.Join(wt, ".git")) {
		t.Errorf("a task worktree's guard = %+v, want one that protects its links and repairs nothing", g)
	} else if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	} else if changed, _ := g.repair(); changed != "" {
		t.Errorf("the guard repaired a task worktree: %s", changed)
	}
	g := newGitGuard(own)
	if g == nil || !g.protects(filepath.Join(own, ".git")) {
		t.Fatal("a user's own linked worktree is not guarded")
	}
	if err := os.WriteFile(filepath.Join(own, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := g.repair(); err != nil || changed != ".git" {
		t.Errorf("repair = %q, %v; want .git put back", changed, err)
	}
	if got := gitIn(t, own, "symbolic-ref", "HEAD"); got != "refs/heads/feature" {
		t.Errorf("after repair the worktree is on %q", got)
	}
}

// BenchmarkGitGuardCheck is what the guard adds to each bash command on a
// fresh checkout (git's sample hooks, config, info/exclude) when nothing
// changed: reading and comparing the guarded files.
func BenchmarkGitGuardCheck(b *testing.B) {
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	g := newGitGuard(ws)
	if g == nil {
		b.Fatal("no guard for a checkout")
	}
	b.ReportMetric(float64(len(g.entries)), "files")
	for b.Loop() {
		if changed, err := g.repair(); err != nil || changed != "" {
			b.Fatalf("repair = %q, %v", changed, err)
		}
	}
}

// A plant the guard cannot take away (an immutable file, say) stops every
// later command instead of being left for the owner's git to run.
func TestGitGuardRefusesWhenItCannotRepair(t *testing.T) {
	ws, _ := hostDirs(t) // on disk: tmpfs may not take the immutable flag
	gitIn(t, ws, "init", "-q")
	g := newGitGuard(ws)
	if g == nil || g.passive {
		t.Fatal("a checkout is not guarded")
	}
	hook := filepath.Join(ws, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+i", hook).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file immutable here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", hook).Run() })
	for range 2 {
		if _, err := g.repair(); err == nil || !strings.Contains(err.Error(), "could not be put back") {
			t.Fatalf("repair = %v; want a refusal naming what could not be put back", err)
		}
	}
}

// The repair when a run ends has no bash call to report to: what it put
// back is logged as a warning, and a checkout it could not put back (here
// the .git directory itself replaced) as an error naming the repository.
func TestGitGuardLastRepairIsLogged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, ws string)
		want  []string
	}{
		{"a hook put back", func(t *testing.T, ws string) {
			if err := os.WriteFile(filepath.Join(ws, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"level=WARN", "put back", "pre-commit"}},
		{".git replaced", func(t *testing.T, ws string) {
			if err := os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "old.git")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"level=ERROR", "not as they were", "replaced the workspace's .git directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			gitIn(t, ws, "init", "-q")
			var logged strings.Builder
			c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Bash: "off", Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			tc.plant(t, ws)
			c.Close()
			for _, w := range tc.want {
				if !strings.Contains(logged.String(), w) {
					t.Errorf("the log after Close lacks %q: %s", w, logged.String())
				}
			}
		})
	}
}
