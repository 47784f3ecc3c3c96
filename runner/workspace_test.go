package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// TestGitWorkspace: a task in a configured git workspace works in its own
// worktree; its change is committed on reasonix/<task id> and the result
// carries the branch and the diff stat against the base.
func TestGitWorkspace(t *testing.T) {
	testenv.LookPath(t, testenv.Git)
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

// TestOneTaskPerWorkspace: with max_parallel = 1 and free workers, a
// second task of the same workspace waits (holding no worker) until the
// first has finished, while a task without a workspace runs meanwhile.
func TestOneTaskPerWorkspace(t *testing.T) {
	ctx := context.Background()
	wsRoot := t.TempDir()
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 3
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: t.TempDir(), MaxParallel: 1}}
	var mu sync.Mutex
	var order []string
	mark := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	rt := newRouter()
	rt.script("first change",
		agenttest.Respond(func(agenttest.Request) agenttest.Turn {
			mark("first started")
			return calls(call("s", "bash", map[string]string{"command": "sleep 1"}))
		}),
		agenttest.Respond(func(agenttest.Request) agenttest.Turn { mark("first done"); return answer("ok") }))
	rt.script("second change",
		agenttest.Respond(func(agenttest.Request) agenttest.Turn { mark("second started"); return answer("ok") }))
	rt.script("scratch work",
		agenttest.Respond(func(agenttest.Request) agenttest.Turn { mark("scratch started"); return answer("ok") }))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: func(c *runner.Config) {
		c.Workspaces = dirWorkspaces{root: wsRoot}
	}})
	submit := func(prompt, ws string) store.Task {
		task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: prompt, Workspace: ws, Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	first := submit("first change", "repo")
	runnertest.WaitState(t, svc, first.ID, 0, store.StateRunning)
	second := submit("second change", "repo")
	scratch := submit("scratch work", "")
	for _, id := range []string{first.ID, second.ID, scratch.ID} {
		if got := runnertest.WaitState(t, svc, id, 0, store.StateSucceeded, store.StateFailed); got.State != store.StateSucceeded {
			t.Fatalf("task %s = %s %+v", id, got.State, got.Result)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	at := func(s string) int { return slices.Index(order, s) }
	if at("second started") < at("first done") {
		t.Errorf("two tasks of one workspace ran at once: %v", order)
	}
	if at("scratch started") > at("first done") {
		t.Errorf("a task without a workspace waited for the workspace: %v", order)
	}
}

// dirWorkspaces gives every task a fresh directory, whatever its
// workspace, so the test needs no git.
type dirWorkspaces struct{ root string }

func (w dirWorkspaces) Prepare(_ context.Context, taskID string, _ *runner.WorkspaceSpec) (*runner.Workdir, error) {
	dir := filepath.Join(w.root, taskID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(dir)
	return &runner.Workdir{Dir: real}, err
}

func (dirWorkspaces) Finish(context.Context, *runner.Workdir, string) (runner.WorkResult, error) {
	return runner.WorkResult{}, nil
}
