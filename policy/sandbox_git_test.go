package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestSandboxKeepsSharedGitStateReadOnly is the hooksPath plant: a task's
// worktree commits on its own branch, but cannot touch the source
// repository's config, hooks or other branches, so the owner's next commit
// runs nothing the task planted.
func TestSandboxKeepsSharedGitStateReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	eachSandbox(t, func(t *testing.T, kind string) {
		_, base := hostDirs(t)
		src, wt := filepath.Join(base, "src"), filepath.Join(base, "wt")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		gitIn(t, src, "init", "-q")
		if err := os.WriteFile(filepath.Join(src, "a"), []byte("a"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, src, "add", "a")
		gitIn(t, src, "commit", "-qm", "first")
		gitIn(t, src, "worktree", "add", "-q", "-b", "reasonix/t1", wt)
		config, _ := os.ReadFile(filepath.Join(src, ".git", "config"))
		mainBefore := gitIn(t, src, "rev-parse", "main")

		c := confined(t, SandboxConfig{WorkspaceRoot: wt, force: kind})
		id := "-c user.name=t -c user.email=t@example.com"
		for _, evil := range []string{
			"git config core.hooksPath /x",
			"git config --global core.hooksPath /x", // $HOME is outside too
			`hooks="$(git rev-parse --git-common-dir)/hooks"; printf '#!/bin/sh\ntouch ` + src + `/PWNED\n' > "$hooks/pre-commit" && chmod +x "$hooks/pre-commit"`,
			"git " + id + " commit -q --allow-empty -m evil && git update-ref refs/heads/main HEAD",
			"git branch -f main HEAD",
			"git tag planted",
		} {
			if out, err := runSandboxed(t, c, evil); err == nil {
				t.Errorf("%s: %q succeeded: %s", kind, evil, out)
			}
		}
		if now, _ := os.ReadFile(filepath.Join(src, ".git", "config")); string(now) != string(config) {
			t.Errorf("%s: the source .git/config changed:\n%s", kind, now)
		}
		if gitIn(t, src, "rev-parse", "main") != mainBefore {
			t.Errorf("%s: the source's main branch moved", kind)
		}
		// The task commits on its own branch.
		if out, err := runSandboxed(t, c, "echo b > b && git add b && git "+id+" commit -qm task && git log --oneline -1"); err != nil {
			t.Fatalf("%s: committing on the task branch failed: %v: %s", kind, err, out)
		}
		if msg := gitIn(t, src, "log", "-1", "--format=%s", "reasonix/t1"); msg != "task" {
			t.Errorf("%s: the task branch's last commit is %q, want task", kind, msg)
		}
		// The owner's next commit runs no planted hook.
		gitIn(t, src, "commit", "-q", "--allow-empty", "-m", "owner")
		if _, err := os.Stat(filepath.Join(src, "PWNED")); err == nil {
			t.Errorf("%s: the owner's commit ran a planted hook", kind)
		}
	})
}
