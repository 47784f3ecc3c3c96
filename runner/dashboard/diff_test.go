package dashboard_test

import (
	"os/exec"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// TestDiffTabShowsTheWholeDiff: the Diff tab of a task that worked in a
// git workspace shows the task's whole diff against its base, the same
// text `reasonix tasks diff` prints; a task without a branch says why
// instead of looking as if nothing changed.
func TestDiffTabShowsTheWholeDiff(t *testing.T) {
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
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main"}}
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"NOTES.md","content":"# <notes>\n"}`}}},
		agenttest.Turn{Text: "written"},
		agenttest.Turn{Text: "nothing to change"})
	e := newEnvOpts(t, runnertest.Options{Provider: p, Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }}, nil)
	b := e.browser()
	b.signIn(e.token("alice", store.RoleSubmit))

	task, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice",
		Prompt: "write notes", Workspace: "repo", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if done := runnertest.WaitState(t, e.svc, task.ID, 0, store.StateSucceeded, store.StateFailed); done.State != store.StateSucceeded {
		t.Fatalf("task ended %s: %+v", done.State, done.Result)
	}
	page := b.get("/tasks/" + task.ID + "?tab=diff").Body
	for _, want := range []string{`<pre class="diff" id="diff">`, `<span class="hdr">&#43;&#43;&#43; b/NOTES.md</span>`,
		`<span class="add">&#43;# &lt;notes&gt;</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the Diff tab lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `id="diff-note"`) {
		t.Error("the Diff tab of a task with a branch carries a note")
	}

	scratch, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "just answer"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, e.svc, scratch.ID, 0, store.StateSucceeded)
	page = b.get("/tasks/" + scratch.ID + "?tab=diff").Body
	if !strings.Contains(page, `id="diff-note"`) || !strings.Contains(page, "scratch directory") || strings.Contains(page, `id="diff"`) {
		t.Errorf("the Diff tab of a scratch task does not say why it has no diff:\n%s", page)
	}
}
