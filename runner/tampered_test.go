package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// TestTaskRedirectingItsGitDirFails is the critical probe: an auto task's
// bash call points its worktree's .git at a git directory it wrote, whose
// config names a core.fsmonitor. When the task ends, the service's git
// must not run that command; the task ends failed with workspace_tampered
// and an event saying why.
func TestTaskRedirectingItsGitDirFails(t *testing.T) {
	repo := commandRepo(t, map[string]string{"a.txt": "a\n"})
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "PWNED")
	ids := make(chan string, 1)
	rt := newRouter()
	rt.script("tidy up",
		agenttest.Respond(func(agenttest.Request) agenttest.Turn {
			dir := filepath.Join(wm.Root(), "worktrees", <-ids)
			evil := filepath.Join(dir, "evil.git")
			script := filepath.Join(dir, "fsm.sh")
			return calls(call("c1", "bash", map[string]any{"command": strings.Join([]string{
				"git init -q --bare " + evil,
				"git -C " + evil + " config core.bare false",
				"git -C " + evil + " config core.fsmonitor " + script,
				"git -C " + evil + " symbolic-ref HEAD refs/heads/reasonix/" + filepath.Base(dir),
				`printf '#!/bin/sh\necho pwned >> ` + marker + `\n' > ` + script,
				"chmod +x " + script,
				"echo changed > a.txt",
				"printf 'gitdir: " + evil + "\\n' > .git",
			}, " && ")}))
		}),
		answer("Tidied."))
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 1
	set.Workspaces = []config.Workspace{{Name: "w", Repo: repo, Base: "main"}}
	svc := runnertest.Start(t, runnertest.Options{Settings: set, Provider: rt,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Prompt: "tidy up", Workspace: "w", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	ids <- task.ID
	end := runnertest.WaitState(t, svc, task.ID, 60*time.Second, store.StateSucceeded, store.StateFailed)

	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the service ran the core.fsmonitor the task planted")
	}
	wrote := false
	for _, e := range runnertest.Events(t, svc, task.ID, "tool_finished") {
		wrote = wrote || strings.Contains(string(e.Payload), `"c1"`) && !strings.Contains(string(e.Payload), `"is_error":true`)
	}
	if !wrote {
		t.Fatalf("the planting call did not run: %v", runnertest.Events(t, svc, task.ID, "tool_finished", "tool_refused"))
	}
	if end.State != store.StateFailed || end.Result == nil || !strings.HasPrefix(end.Result.Error, "workspace_tampered") ||
		!strings.Contains(end.Result.Reason, ".git file") && !strings.Contains(end.Result.Reason, "worktree") {
		t.Fatalf("task = %s %+v, want failed with workspace_tampered", end.State, end.Result)
	}
	evs := runnertest.Events(t, svc, task.ID, "workspace_tampered")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), ".git file") {
		t.Fatalf("workspace_tampered events = %+v, want one naming the .git file", evs)
	}
	if got := gitOut(t, repo, "rev-list", "--count", "main..reasonix/"+task.ID); got != "0" {
		t.Errorf("the tampered worktree's changes were committed (%s commits)", got)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
