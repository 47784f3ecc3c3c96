package runner_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// barrier lets n callers through only once all n have arrived; a caller
// that waits longer than patience gets false (the callers never met).
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait(patience time.Duration) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	t := time.NewTimer(patience)
	defer t.Stop()
	select {
	case <-b.all:
		return true
	case <-t.C:
		return false
	}
}

// gitRepo makes a repository with one commit on main.
func gitRepo(t testing.TB) string {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
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
	return repo
}

// TestTasksOfOneWorkspaceRunAtOnce: three tasks of one git workspace, on a
// node with three workers and max_parallel left at its default, all run at
// once: the model answers none of them until all three have asked. Each
// ends on its own branch with its own change.
func TestTasksOfOneWorkspaceRunAtOnce(t *testing.T) {
	ctx := context.Background()
	repo := gitRepo(t)
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 3
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main"}}
	const n = 3
	met := newBarrier(n)
	var mu sync.Mutex
	var alone []string
	rt := newRouter()
	for i := range n {
		prompt := fmt.Sprint("change ", i)
		rt.script(prompt,
			agenttest.Respond(func(agenttest.Request) agenttest.Turn {
				// Generous: the other tasks only need to be claimed and
				// get their worktrees on a loaded machine.
				if !met.wait(30 * time.Second) {
					mu.Lock()
					alone = append(alone, prompt)
					mu.Unlock()
				}
				return calls(call("w", "write_file", map[string]string{"path": fmt.Sprint("file", i, ".txt"), "content": prompt + "\n"}))
			}),
			answer("done"))
	}
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	var ids []string
	for i := range n {
		task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint("change ", i), Workspace: "repo", Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	for i, id := range ids {
		done := runnertest.WaitState(t, svc, id, time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
		if done.State != store.StateSucceeded || done.Result == nil {
			t.Fatalf("task %s = %s %+v", id, done.State, done.Result)
		}
		if done.Result.Branch != "reasonix/"+id || !strings.Contains(done.Result.DiffStat, fmt.Sprint("file", i, ".txt")) {
			t.Errorf("task %s: result %+v, want its own branch with its own file", id, done.Result)
		}
		ls := exec.Command("git", "ls-tree", "--name-only", done.Result.Branch)
		ls.Dir = repo
		if out, err := ls.Output(); err != nil || strings.TrimSpace(string(out)) != fmt.Sprint("file", i, ".txt") {
			t.Errorf("task %s: files on its branch = %q, %v", id, out, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(alone) > 0 {
		t.Errorf("tasks of one workspace did not run at once: %v asked the model while the others could not", alone)
	}
}

// TestConflictingTasksPublishTheirOwn: two tasks of one workspace run at
// once and write different contents to the same file; each publishes its
// own branch and opens its own pull request with exactly its change.
// Nothing is merged: the conflict is for the pull requests to show.
func TestConflictingTasksPublishTheirOwn(t *testing.T) {
	ctx := context.Background()
	met := newBarrier(2)
	var mu sync.Mutex
	var alone []string
	rt := newRouter()
	for _, who := range []string{"ann", "bob"} {
		prompt := "greet as " + who
		rt.script(prompt,
			agenttest.Respond(func(agenttest.Request) agenttest.Turn {
				if !met.wait(30 * time.Second) {
					mu.Lock()
					alone = append(alone, prompt)
					mu.Unlock()
				}
				return calls(call("w", "write_file", map[string]string{"path": "README.md", "content": "hello from " + who + "\n"}))
			}),
			answer("Greeted as "+who+"."))
	}
	b := newPublishBench(t, forge.GitHub, rt)
	mainBefore := b.git.Ref(t, "refs/heads/main")
	ids := map[string]string{}
	for _, who := range []string{"ann", "bob"} {
		task, _, err := b.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "greet as " + who, Workspace: "app", Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		ids[who] = task.ID
	}
	for who, id := range ids {
		done := runnertest.WaitState(t, b.svc, id, time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
		if done.State != store.StateSucceeded || done.Result == nil || done.Result.PR == nil {
			t.Fatalf("task of %s = %s %+v", who, done.State, done.Result)
		}
		show := exec.Command("git", "show", "reasonix/"+id+":README.md")
		show.Dir = b.repo
		if out, err := show.Output(); err != nil || string(out) != "hello from "+who+"\n" {
			t.Errorf("README.md on %s's branch = %q, %v", who, out, err)
		}
		if b.git.Ref(t, "refs/heads/reasonix/"+id) == "" {
			t.Errorf("%s's branch is not on the forge", who)
		}
	}
	prs := b.srv.PRs()
	heads := map[string]bool{}
	for _, pr := range prs {
		heads[pr.Head] = true
	}
	if len(prs) != 2 || !heads["reasonix/"+ids["ann"]] || !heads["reasonix/"+ids["bob"]] {
		t.Errorf("pull requests = %+v, want one per task", prs)
	}
	if got := b.git.Ref(t, "refs/heads/main"); got != mainBefore {
		t.Errorf("main on the forge moved: %s, was %s", got, mainBefore)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(alone) > 0 {
		t.Errorf("the tasks did not run at once: %v", alone)
	}
}
