package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
)

// TestRunInLinkedWorktreeMovesOnlyItsBranch is `reasonix run` in a
// person's own linked worktree on a reasonix/ branch: a command of the run
// tries to move another reasonix/ branch (git update-ref, a write of the
// loose ref, a line appended to packed-refs) and none of it lands, while
// the model's own `git add`/`git commit` work and the run's branch ends at
// the run's commit, checked out again. Each hostile command runs (under
// yolo and under --auto alike) and the sandbox refuses its write: it grants
// no shared ref, HEAD being detached for the run.
func TestRunInLinkedWorktreeMovesOnlyItsBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, posture := range [][]string{{"--posture", "yolo"}, {"--auto"}} {
		t.Run(strings.TrimLeft(posture[len(posture)-1], "-"), func(t *testing.T) {
			base, err := os.MkdirTemp("/var/tmp", "reasonix-checkout-")
			if err != nil {
				t.Skip("no /var/tmp: git in the sandbox would not see a private /tmp")
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			if base, err = filepath.EvalSymlinks(base); err != nil {
				t.Fatal(err)
			}
			src, wt := filepath.Join(base, "src"), filepath.Join(base, "wt")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			git := func(dir string, args ...string) string {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v: %s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			git(src, "init", "-q")
			git(src, "config", "user.name", "t")
			git(src, "config", "user.email", "t@example.com")
			if err := os.WriteFile(filepath.Join(src, "a"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(src, "add", "a")
			git(src, "commit", "-qm", "first")
			first := git(src, "rev-parse", "HEAD")
			git(src, "commit", "-q", "--allow-empty", "-m", "second")
			second := git(src, "rev-parse", "HEAD")
			git(src, "branch", "reasonix/other", first)
			git(src, "pack-refs", "--all")
			git(src, "worktree", "add", "-q", "-b", "reasonix/mine", wt, first)
			common := filepath.Join(src, ".git")
			packed, _ := os.ReadFile(filepath.Join(common, "packed-refs"))

			refs := filepath.Join(common, "refs", "heads", "reasonix")
			var calls []agent.ToolCall
			for i, evil := range []string{
				"echo tried; git update-ref refs/heads/reasonix/other " + second + " && echo MOVED-by-update-ref",
				"git branch -f reasonix/other " + second + " && echo MOVED-by-branch",
				"mkdir -p " + refs + " && echo " + second + " > " + filepath.Join(refs, "other") + " && echo MOVED-by-loose-ref",
				"echo '" + second + " refs/heads/reasonix/other' >> " + filepath.Join(common, "packed-refs") + " && echo MOVED-by-packed-refs",
			} {
				args, _ := json.Marshal(map[string]string{"command": evil})
				calls = append(calls, call(fmt.Sprintf("e%d", i), "bash", string(args)))
			}
			commit := "echo b > b && git add b && git commit -qm run-commit && echo COMMITTED"
			commitArgs, _ := json.Marshal(map[string]string{"command": commit})
			e := newE2E(t, toolTurn(calls...), toolTurn(call("c2", "bash", string(commitArgs))), answer("done"))
			e.work = wt
			stdout, stderr, code := e.run(append(append([]string{"run"}, posture...), "work")...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			results := lastToolResults(e.srv)
			t.Logf("tool results:\n%s", results)
			if strings.Contains(results, "MOVED") {
				t.Errorf("a command of the run moved another branch:\n%s", results)
			}
			if strings.Count(results, "Permission denied") != 4 {
				t.Errorf("the hostile commands were not each refused by the sandbox:\n%s", results)
			}
			if !strings.Contains(results, "COMMITTED") {
				t.Errorf("the model's own git commit failed:\n%s\n%s", results, stderr)
			}
			if got := git(src, "rev-parse", "reasonix/other"); got != first {
				t.Errorf("reasonix/other is at %s, want %s (unmoved)", got, first)
			}
			if now, _ := os.ReadFile(filepath.Join(common, "packed-refs")); string(now) != string(packed) {
				t.Errorf("packed-refs changed:\n%s", now)
			}
			if _, err := os.Stat(filepath.Join(common, "refs", "heads", "reasonix", "other")); err == nil {
				t.Errorf("a loose ref for reasonix/other was written")
			}
			if msg := git(src, "log", "-1", "--format=%s", "reasonix/mine"); msg != "run-commit" {
				t.Errorf("reasonix/mine's last commit is %q, want the run's commit", msg)
			}
			if head := git(wt, "symbolic-ref", "HEAD"); head != "refs/heads/reasonix/mine" {
				t.Errorf("the worktree's HEAD is %q after the run, want the branch checked out again", head)
			}
			if st := git(wt, "status", "--porcelain"); st != "" {
				t.Errorf("the worktree is not clean after the run: %q", st)
			}
		})
	}
}
