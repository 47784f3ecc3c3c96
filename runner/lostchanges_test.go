package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/workspace"
)

// TestTakeOverNamesLostChanges: a node died running a workspace task after
// a checkpoint (kept.txt, committed by a hand-over) and one more writing
// step (lost.txt, never committed). The node that takes the task over
// checks the branch out as checkpointed, and the model's next request
// carries a note naming exactly the lost write: not the checkpointed one,
// not a read.
func TestTakeOverNamesLostChanges(t *testing.T) {
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
	nodeA, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	nodeB, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	const prompt = "write two files"
	task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Prompt: prompt, Workspace: "repo", Posture: "auto"}, "")
	if err != nil {
		t.Fatal(err)
	}
	dead := "dead-node"
	if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &dead}); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(ctx, task.ID); err != nil {
		t.Fatal(err)
	}

	// What the dead node did: step 1 checkpointed, step 2 not.
	spec := &workspace.Spec{Name: "repo", Repo: repo, Base: "main"}
	ws, err := nodeA.Prepare(ctx, task.ID, spec)
	if err != nil {
		t.Fatal(err)
	}
	journal := func(callID, tool string, args map[string]string, seq int) agent.ToolCall {
		t.Helper()
		c := call(callID, tool, args)
		key := fmt.Sprintf("%d/%s", seq, callID) // the journal key: assistant message seq / call id
		if err := st.JournalStart(ctx, task.ID, key, tool, "h", c.Arguments); err != nil {
			t.Fatal(err)
		}
		if err := st.JournalFinish(ctx, task.ID, key, "ok", false); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := os.WriteFile(filepath.Join(ws.Dir, "kept.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c0 := journal("c0", "write_file", map[string]string{"path": "kept.txt", "content": "kept\n"}, 2)
	if err := nodeA.Release(ctx, ws, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkCheckpointed(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if ws, err = nodeA.Prepare(ctx, task.ID, spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.Dir, "lost.txt"), []byte("lost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c1 := journal("c1", "write_file", map[string]string{"path": "lost.txt", "content": "lost\n"}, 4)
	c2 := journal("c2", "read_file", map[string]string{"path": "kept.txt"}, 4)
	if _, err := st.AppendMessages(ctx, task.ID,
		agent.Message{Role: agent.RoleUser, Content: prompt},
		agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{c0}},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c0", Name: "write_file", Content: "ok"},
		agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{c1, c2}},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c1", Name: "write_file", Content: "ok"},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c2", Name: "read_file", Content: "ok"},
	); err != nil {
		t.Fatal(err)
	}

	set := config.Default()
	set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main"}}
	rt := newRouter()
	p := rt.script(prompt, answer("redone"))
	svc := runnertest.Start(t, runnertest.Options{Store: st, Now: clk.Now, Provider: rt, Settings: set,
		Configure: func(c *runner.Config) { c.Node = "n2"; c.Workspaces = runner.NewWorkspaces(nodeB) }})
	clk.Advance(2 * time.Minute)
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != "n2" {
		t.Fatalf("taken over: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != agent.RoleUser || !contains(last.Content, `write_file path="lost.txt"`) ||
		contains(last.Content, "kept.txt") || !contains(last.Content, "is NOT there") {
		t.Fatalf("the continuation's last message = %+v", last)
	}
	evs := runnertest.Events(t, svc, task.ID, "workspace_changes_lost")
	var lost struct {
		Node  string
		Calls int
	}
	if len(evs) != 1 || json.Unmarshal(evs[0].Payload, &lost) != nil || lost.Calls != 1 || lost.Node != "n2" {
		t.Fatalf("workspace_changes_lost events: %+v", evs)
	}
	// The run's Finish is a checkpoint: a later continuation elsewhere
	// owes the model no note.
	left, err := st.UncheckpointedCalls(ctx, task.ID)
	if err != nil || len(left) != 0 {
		t.Fatalf("after the finish, calls outside any checkpoint: %+v %v", left, err)
	}
}
