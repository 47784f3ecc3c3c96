package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// TestGitWorkspace: a task in a configured git workspace works in its own
// worktree; its change is committed on reasonix/<task id> and the result
// carries the branch and the diff stat against the base.
func TestGitWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "root"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main"}}
	rt := newRouter()
	rt.script("add a readme\nwith details",
		calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": "# hello\n"})),
		answer("Added README.md."))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "add a readme\nwith details", Workspace: "repo", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s %+v", done.State, done.Result)
	}
	if done.Result.Branch != "reasonix/"+task.ID || !strings.Contains(done.Result.DiffStat, "README.md") {
		t.Fatalf("result = %+v", done.Result)
	}
	show := exec.Command("git", "log", "-1", "--format=%s", done.Result.Branch)
	show.Dir = repo
	out, err := show.Output()
	if err != nil || strings.TrimSpace(string(out)) != "reasonix: add a readme" {
		t.Fatalf("commit message = %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "README.md")); err == nil {
		t.Fatal("the task wrote into the repository's own checkout")
	}
}
