package workspace_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/runner/workspace"
)

// A sandboxed task moves no branch but its own, and that one only through
// the service: it cannot update another task's branch or main, its own
// commits stay on its detached HEAD until Finish, the owner can read the
// task branch all along (it names only commits the shared store holds),
// and after Finish the branch has the task's commit and the store is
// whole.
func TestSandboxedTaskMovesOnlyItsOwnBranch(t *testing.T) {
	f := newFixture(t, false)
	ctx := testCtx(t)
	repo := f.repo(map[string]string{"a.txt": "a\n"})
	spec := &workspace.Spec{Name: "app", Repo: repo}
	ws, err := f.m.Prepare(ctx, "t1", spec)
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.m.Prepare(ctx, "t2", spec)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws.Dir, Bash: "require"})
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	starter, ok := conf.Shell().(agent.ShellStarter)
	if !conf.ShellSandboxed() || !ok {
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
		if err := starter.StartShell(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	main := f.git(repo, "rev-parse", "main")
	otherTip := f.git(repo, "rev-parse", other.Branch)
	if out, err := run("echo b > b.txt && git add b.txt && git commit -qm task"); err != nil {
		t.Fatalf("the task cannot commit: %v: %s", err, out)
	}
	for _, evil := range []string{
		"git update-ref refs/heads/" + other.Branch + " HEAD",
		"git branch -f " + other.Branch + " HEAD",
		"git update-ref refs/heads/main HEAD",
		"git update-ref refs/heads/" + ws.Branch + " HEAD",
		"git update-ref refs/heads/reasonix/new HEAD",
	} {
		if out, err := run(evil); err == nil {
			t.Errorf("%q succeeded in the sandbox: %s", evil, out)
		}
	}
	if f.git(repo, "rev-parse", other.Branch) != otherTip || f.git(repo, "rev-parse", "main") != main {
		t.Fatal("the sandbox moved another task's branch or main")
	}
	// While the task runs, its branch is readable from the source
	// repository: it is where the task started.
	if got := f.git(repo, "log", "-1", "--format=%H", ws.Branch); got != ws.Base {
		t.Errorf("git log %s while the task runs = %q, want its base %s", ws.Branch, got, ws.Base)
	}
	if _, err := f.m.Finish(ctx, ws, "done"); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	f.git(repo, "fsck", "--strict", "--no-dangling")
	if got := f.git(repo, "log", "-1", "--format=%s", ws.Branch); got != "task" {
		t.Errorf("the task branch's last commit after Finish is %q, want task", got)
	}
	if f.git(repo, "rev-parse", other.Branch) != otherTip {
		t.Error("Finish moved another task's branch")
	}
}
