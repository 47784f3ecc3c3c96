package runner_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// publishBench is a service whose workspace "app" publishes to a fake
// forge backed by a real git server.
type publishBench struct {
	svc  *runner.Service
	srv  *forgetest.Server
	git  *forgetest.GitServer
	repo string
}

func newPublishBench(t *testing.T, kind forge.Kind, rt *router, tune ...func(*config.Config)) *publishBench {
	t.Helper()
	return newPublishBenchOn(t, nil, kind, rt, tune...)
}

// newPublishBenchOn is newPublishBench on store st (nil: a new one).
func newPublishBenchOn(t *testing.T, st *store.Store, kind forge.Kind, rt *router, tune ...func(*config.Config)) *publishBench {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
	b := &publishBench{srv: forgetest.New(t, kind, forgetest.Options{})}
	b.git = forgetest.NewGitServer(t, b.srv.Project(), b.srv.Token())
	b.srv.UseGit(b.git)
	t.Setenv("REASONIX_TEST_FORGE_TOKEN", b.srv.Token())
	b.repo = t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"commit", "-q", "--allow-empty", "-m", "root"},
		{"-c", "http.extraHeader=Authorization: Bearer " + b.srv.Token(), "push", "-q", b.git.URL, "main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = b.repo
		cmd.Env = forgetest.GitEnv(t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Serve.PublicURL = "https://reasonix.example"
	set.Workspaces = []config.Workspace{{Name: "app", Repo: b.repo, Base: "main", Publish: &config.Publish{
		Forge: string(kind), APIURL: b.srv.URL, Project: b.srv.Project(), TokenEnv: "REASONIX_TEST_FORGE_TOKEN",
		PushURL: b.git.URL, Mode: config.PublishPR, Base: "main", Labels: []string{"bot"},
	}}}
	for _, f := range tune {
		f(set)
	}
	b.svc = runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Store: st,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	return b
}

// A task that succeeded with changes ends with its branch on the forge and
// one pull request, in its result and a published event; the token is in
// no event.
func TestPublishOpensOnePullRequest(t *testing.T) {
	for _, kind := range []forge.Kind{forge.GitHub, forge.GitLab} {
		t.Run(string(kind), func(t *testing.T) {
			rt := newRouter()
			rt.script("add a readme",
				calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": "# hello\n"})),
				answer("Added README.md."))
			b := newPublishBench(t, kind, rt)
			task, _, err := b.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: "add a readme", Workspace: "app", Posture: "auto"})
			if err != nil {
				t.Fatal(err)
			}
			done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
			if done.State != store.StateSucceeded {
				t.Fatalf("state = %s %+v", done.State, done.Result)
			}
			evs := runnertest.Events(t, b.svc, task.ID, "published")
			if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"state":"pr"`) {
				t.Fatalf("published events = %v", evs)
			}
			got, err := b.svc.Task(context.Background(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			prs := b.srv.PRs()
			if len(prs) != 1 || got.Result.PR == nil || got.Result.PR.Number != prs[0].Number || got.Result.Publish != "pr" ||
				got.Result.PR.State != "open" || got.Result.PR.URL == "" {
				t.Fatalf("forge PRs %+v, result %+v", prs, got.Result)
			}
			pr := prs[0]
			if pr.Head != "reasonix/"+task.ID || pr.Title != "add a readme" || !strings.Contains(pr.Body, "Added README.md.") ||
				!strings.Contains(pr.Body, "README.md |") || !strings.Contains(pr.Body, "https://reasonix.example/tasks/"+task.ID) ||
				!strings.Contains(pr.Body, "Asked by") || len(pr.Labels) != 1 {
				t.Errorf("pull request = %+v", pr)
			}
			if b.git.Ref(t, "refs/heads/reasonix/"+task.ID) == "" {
				t.Error("the branch is not on the forge")
			}
			if d, truncated, err := b.svc.Diff(context.Background(), task.ID); err != nil || truncated || !strings.Contains(string(d), "+# hello") {
				t.Errorf("Diff = %q, %v, %v", d, truncated, err)
			}
			for _, e := range runnertest.Events(t, b.svc, task.ID) {
				if strings.Contains(string(e.Payload), b.srv.Token()) {
					t.Errorf("event %s holds the token", e.Type)
				}
			}
		})
	}
}

// A task that changed nothing pushes no branch, opens no pull request and
// says so.
func TestPublishNothingWithoutChanges(t *testing.T) {
	rt := newRouter()
	rt.script("what is in here?", answer("Nothing much."))
	b := newPublishBench(t, forge.GitHub, rt)
	task, _, err := b.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: "what is in here?", Workspace: "app", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.Publish != "unchanged" || done.Result.PR != nil {
		t.Fatalf("state = %s, result %+v", done.State, done.Result)
	}
	evs := runnertest.Events(t, b.svc, task.ID, "published")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"state":"unchanged"`) {
		t.Errorf("published events = %v", evs)
	}
	if len(b.srv.PRs()) != 0 || b.git.Ref(t, "refs/heads/reasonix/"+task.ID) != "" {
		t.Errorf("a task without changes published: PRs %v", b.srv.PRs())
	}
	if d, _, err := b.svc.Diff(context.Background(), task.ID); err != nil || len(d) != 0 {
		t.Errorf("Diff of a task without changes = %q, %v", d, err)
	}
	if _, _, err := b.svc.Diff(context.Background(), "t_nosuchtask"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("Diff of an unknown task: %v", err)
	}
}

// TestBudgetCardStopAndPublish: a task that spent its tool-call budget
// parks behind a budget card; "Stop and publish what exists" ends it
// budget_exhausted and opens the pull request of what it wrote, which a
// plain budget_exhausted end does not.
func TestBudgetCardStopAndPublish(t *testing.T) {
	rt := newRouter()
	rt.script("add two files",
		calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": "# hello\n"})),
		calls(call("c2", "write_file", map[string]string{"path": "TWO.md", "content": "two\n"})), // past max_tool_calls
		answer("not reached"))
	b := newPublishBench(t, forge.GitHub, rt, func(set *config.Config) { set.Runner.MaxToolCalls = 1 })
	ctx := context.Background()
	task, _, err := b.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "add two files",
		Workspace: "app", Posture: "auto", Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	card := waitPending(t, b.svc, task.ID)
	if card.Tool != "budget" || card.Subject != "tool_budget" || !strings.Contains(card.Preview, "+ 1 tool calls") {
		t.Fatalf("card = %+v", card)
	}
	if len(b.srv.PRs()) != 0 {
		t.Fatal("a pull request before the decision")
	}
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "stop_publish", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "tool_budget" || done.Result.Publish != "pr" || done.Result.PR == nil {
		t.Fatalf("after stop and publish: %s %+v", done.State, done.Result)
	}
	if prs := b.srv.PRs(); len(prs) != 1 || prs[0].Head != "reasonix/"+task.ID {
		t.Fatalf("forge PRs = %+v", prs)
	}
	if d, _, err := b.svc.Diff(ctx, task.ID); err != nil || !strings.Contains(string(d), "+# hello") || strings.Contains(string(d), "two") {
		t.Fatalf("diff = %q, %v", d, err)
	}
}

// The forge token never reaches the task: a sandboxed command that prints
// its environment and looks for the token's variable finds neither, and
// neither does the model's transcript or any event, although the same task
// pushes and opens its pull request with that token.
func TestForgeTokenNeverReachesTheTask(t *testing.T) {
	rt := newRouter()
	p := rt.script("look around",
		calls(call("e", "bash", map[string]string{"command": "env; printenv REASONIX_TEST_FORGE_TOKEN; echo probe-done"})),
		calls(call("w", "write_file", map[string]string{"path": "NOTES.md", "content": "notes\n"})),
		answer("Looked around."))
	b := newPublishBench(t, forge.GitHub, rt)
	task, _, err := b.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: "look around", Workspace: "app", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result == nil || done.Result.Publish != "pr" {
		t.Fatalf("task = %s %+v; want it published with the token", done.State, done.Result)
	}
	token := b.srv.Token()
	out := toolResult(p, "e")
	if !strings.Contains(out, "probe-done") || !strings.Contains(out, "PATH=") {
		t.Fatalf("the probe did not run: %q", out)
	}
	if strings.Contains(out, token) || strings.Contains(out, "REASONIX_TEST_FORGE_TOKEN") {
		t.Errorf("the sandboxed command saw the token or its variable:\n%s", out)
	}
	for _, req := range p.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, token) {
				t.Errorf("a %s message to the model holds the token", m.Role)
			}
		}
	}
	for _, e := range runnertest.Events(t, b.svc, task.ID) {
		if strings.Contains(string(e.Payload), token) {
			t.Errorf("event %s holds the token", e.Type)
		}
	}
}
