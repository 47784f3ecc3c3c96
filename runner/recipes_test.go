package runner_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// commandRepo makes a git repository whose main branch holds files.
func commandRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
	repo := t.TempDir()
	gitIn := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q", "-b", "main")
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn("add", "--all")
	gitIn("commit", "-q", "-m", "root")
	return repo
}

func commandService(t *testing.T, repo string, set *config.Config) *runner.Service {
	t.Helper()
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if set == nil {
		set = config.Default()
	}
	set.Runner.MaxConcurrentTasks = 1
	set.Workspaces = []config.Workspace{{Name: "w", Repo: repo, Base: "main"}}
	return runnertest.Start(t, runnertest.Options{Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
}

// A command's rendered body is the task's prompt; the command cannot
// change the posture or anything else about the task, whatever its front
// matter says; a later edit in the working tree (not committed to the
// base) is not what runs.
func TestSubmitCommandRendersTheBaseBody(t *testing.T) {
	repo := commandRepo(t, map[string]string{
		".reasonix/commands/review.md":     "---\ndescription: Review\nposture: yolo\nallowed-tools: bash\n---\nReview $1 and then $ARGUMENTS. Cost $$3.",
		".reasonix/commands/git/commit.md": "Commit.",
	})
	if err := os.WriteFile(filepath.Join(repo, ".reasonix/commands/review.md"), []byte("uncommitted"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := commandService(t, repo, nil)
	task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "/review", Args: []string{"pkg/foo extra"}, Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Review pkg/foo and then pkg/foo extra. Cost $3."; task.Prompt != want {
		t.Fatalf("prompt = %q, want %q", task.Prompt, want)
	}
	if task.Posture != "ask" {
		t.Fatalf("posture = %q: a command must not change it", task.Posture)
	}
	if ev := runnertest.Events(t, svc, task.ID, "task_state"); len(ev) == 0 || !strings.Contains(string(ev[0].Payload), `"command":"review"`) {
		t.Fatalf("origin does not name the command: %+v", ev)
	}
}

func TestSubmitUnknownCommandSuggestsNearest(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	svc := commandService(t, repo, nil)
	_, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "reveiw", Workspace: "w"})
	var re *runner.Error
	if !errors.As(err, &re) || !errors.Is(re.Kind, runner.ErrInvalid) || !strings.Contains(re.Message, "did you mean /review") {
		t.Fatalf("err = %v, want an invalid request suggesting /review", err)
	}
	page, _ := svc.Tasks(context.Background(), store.TaskFilter{Limit: 10})
	if len(page.Tasks) != 0 {
		t.Fatalf("a task was created: %+v", page.Tasks)
	}
}

// A schedule that names a command runs the command's body with its args.
func TestScheduleNamesACommand(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/deps/bump.md": "Bump the dependencies of $1."})
	set := config.Default()
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "@every 1s", Command: "deps:bump", Args: []string{"./..."},
		Workspace: "w", Posture: "ask", Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	svc := commandService(t, repo, set)
	task, err := svc.RunSchedule(context.Background(), runner.Principal{ID: "token:root", Role: store.RoleAdmin}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if task.Prompt != "Bump the dependencies of ./...." || task.Requester != "schedule:nightly" {
		t.Fatalf("task = %+v", task)
	}
}

func TestSubmitCommandInUnknownWorkspace(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	svc := commandService(t, repo, nil)
	_, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "review", Workspace: "nope"})
	if err == nil || !strings.Contains(err.Error(), `unknown workspace "nope" (known: w)`) {
		t.Fatalf("err = %v", err)
	}
}
