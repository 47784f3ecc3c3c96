package workspace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/runner/workspace"
)

// TestSandboxedTaskCannotPlantHooksInTheSource is the hooksPath plant
// against a worktree Prepare made: under the OS sandbox the task commits
// on its own branch, but the source repository's config, hooks and other
// branches stay as they were, and the owner's next commit runs no hook.
func TestSandboxedTaskCannotPlantHooksInTheSource(t *testing.T) {
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	ws, err := f.m.Prepare(ctx, "t7", &workspace.Spec{Name: "app", Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws.Dir, Bash: "require"})
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	if !conf.ShellSandboxed() {
		if os.Getenv("CI") == "" {
			t.Skip("no OS sandbox on this host")
		}
		t.Fatal("no OS sandbox, and CI requires one")
	}
	env := append(append(append([]string(nil), f.env...), conf.GitEnv()...),
		"GIT_AUTHOR_NAME=Task", "GIT_AUTHOR_EMAIL=task@example.com",
		"GIT_COMMITTER_NAME=Task", "GIT_COMMITTER_EMAIL=task@example.com")
	run := func(script string) (string, error) {
		var out strings.Builder
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ws.Dir, env, &out, &out
		if err := conf.Shell().(agent.ShellStarter).StartShell(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	config := read(t, filepath.Join(repo, ".git", "config"))
	main := f.git(repo, "rev-parse", "main")
	blob := f.git(repo, "rev-parse", "main:a.txt")
	pwned := filepath.Join(repo, "PWNED")
	for _, evil := range []string{
		"git config core.hooksPath /x",
		`h="$(git rev-parse --git-common-dir)/hooks"; printf '#!/bin/sh\ntouch ` + pwned + `\n' > "$h/pre-commit" && chmod +x "$h/pre-commit"`,
		"git update-ref refs/heads/main HEAD",
		// D3: the stored object of a base-commit file, replaced.
		"o=" + filepath.Join(repo, ".git", "objects", blob[:2], blob[2:]) + "; rm -f $o && echo planted > $o",
		"echo planted > " + filepath.Join(repo, ".git", "objects", "info", "alternates"),
	} {
		if out, err := run(evil); err == nil {
			t.Errorf("%q succeeded in the sandbox: %s", evil, out)
		}
	}
	if out, err := run("echo b > b.txt && git add b.txt && git commit -qm task"); err != nil {
		t.Fatalf("the task cannot commit on its own branch: %v: %s", err, out)
	}
	if read(t, filepath.Join(repo, ".git", "config")) != config || f.git(repo, "rev-parse", "main") != main {
		t.Error("the source repository's config or main branch changed")
	}
	f.git(repo, "commit", "--quiet", "--allow-empty", "-m", "owner")
	if exists(pwned) {
		t.Error("the owner's commit ran a hook the task planted")
	}
	if _, err := f.m.Finish(ctx, ws, "done"); err != nil {
		t.Fatalf("Finish after a sandboxed commit: %v", err)
	}
	// The task's commit, written to its own object directory, is in the
	// shared store now, and the store is whole.
	f.git(repo, "fsck", "--strict", "--no-dangling")
	if got := f.git(repo, "log", "-1", "--format=%s", ws.Branch); got != "task" {
		t.Errorf("the task branch's last commit is %q, want task", got)
	}
	if got := f.git(repo, "show", "main:a.txt"); got != "a" {
		t.Errorf("main:a.txt = %q after the task", got)
	}
}

// TestWorktreeVersusClonePrepareTime measures what item 4 chose between:
// a worktree of the source repository (what Prepare makes) against a
// local clone per task, for a repository of a few hundred files. It logs
// the medians; it asserts nothing about speed.
func TestWorktreeVersusClonePrepareTime(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement")
	}
	f := newFixture(t, false)
	files := map[string]string{}
	for i := range 400 {
		files[filepath.Join("pkg"+strconv.Itoa(i%20), "f"+strconv.Itoa(i)+".go")] = strings.Repeat("line\n", 40)
	}
	repo := f.repo(files)
	const n = 7
	var wt, clone, shared []time.Duration
	for i := range n {
		dir := t.TempDir()
		start := time.Now()
		f.git(repo, "worktree", "add", "--quiet", "-b", "bench/"+strconv.Itoa(i), filepath.Join(dir, "wt"), "main")
		wt = append(wt, time.Since(start))
		start = time.Now()
		f.git(dir, "clone", "--quiet", "--local", repo, "clone")
		clone = append(clone, time.Since(start))
		start = time.Now()
		f.git(dir, "clone", "--quiet", "--shared", repo, "shared")
		shared = append(shared, time.Since(start))
	}
	med := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	t.Logf("400 files, median of %d: git worktree add %v, git clone --local %v, git clone --shared %v", n, med(wt), med(clone), med(shared))
}
