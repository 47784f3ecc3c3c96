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

// deadRun is a workspace task that node "dead-node" was running when it
// died: one step checkpointed (kept.txt, committed by a hand-over), one
// writing step and one read since (lost.txt, never committed), and the
// calls of extra asked for last, never started. The service that takes it
// over is to use workspaces of its own (another node's root).
type deadRun struct {
	st    *store.Store
	clk   *clock
	repo  string
	task  store.Task
	nodeB *workspace.Manager
	set   *config.Config
}

func newDeadRun(t *testing.T, prompt string, extra ...agent.ToolCall) *deadRun {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
	ctx := context.Background()
	d := &deadRun{clk: newClock(), repo: t.TempDir()}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "root"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = d.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	nodeA, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if d.nodeB, err = workspace.New(workspace.Config{Root: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	d.set = config.Default()
	d.set.Workspaces = []config.Workspace{{Name: "repo", Repo: d.repo, Base: "main"}}
	st := storetest.SQLite(t, store.Config{Now: d.clk.Now})
	d.st = st
	if d.task, _, err = st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Prompt: prompt, Workspace: "repo", Posture: "auto"}, ""); err != nil {
		t.Fatal(err)
	}
	dead := "dead-node"
	if _, err := st.SetTaskState(ctx, d.task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &dead}); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(ctx, d.task.ID); err != nil {
		t.Fatal(err)
	}
	spec := &workspace.Spec{Name: "repo", Repo: d.repo, Base: "main"}
	ws, err := nodeA.Prepare(ctx, d.task.ID, spec)
	if err != nil {
		t.Fatal(err)
	}
	journal := func(callID, tool string, args map[string]string, seq int) agent.ToolCall {
		t.Helper()
		c := call(callID, tool, args)
		key := fmt.Sprintf("%d/%s", seq, callID) // the journal key: assistant message seq / call id
		if err := st.JournalStart(ctx, d.task.ID, key, tool, "h", c.Arguments); err != nil {
			t.Fatal(err)
		}
		if err := st.JournalFinish(ctx, d.task.ID, key, "ok", false); err != nil {
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
	if err := st.MarkCheckpointed(ctx, d.task.ID); err != nil {
		t.Fatal(err)
	}
	if ws, err = nodeA.Prepare(ctx, d.task.ID, spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.Dir, "lost.txt"), []byte("lost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c1 := journal("c1", "write_file", map[string]string{"path": "lost.txt", "content": "lost\n"}, 4)
	c2 := journal("c2", "read_file", map[string]string{"path": "kept.txt"}, 4)
	if _, err := st.AppendMessages(ctx, d.task.ID,
		agent.Message{Role: agent.RoleUser, Content: prompt},
		agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{c0}},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c0", Name: "write_file", Content: "ok"},
		agent.Message{Role: agent.RoleAssistant, ToolCalls: append([]agent.ToolCall{c1, c2}, extra...)},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c1", Name: "write_file", Content: "ok"},
		agent.Message{Role: agent.RoleTool, ToolCallID: "c2", Name: "read_file", Content: "ok"},
	); err != nil {
		t.Fatal(err)
	}
	return d
}

// takeOver starts node n2 on the dead run's store and lets the dead node's
// heartbeat go stale.
func (d *deadRun) takeOver(t *testing.T, rt *router, configure func(*runner.Config)) *runner.Service {
	svc := runnertest.Start(t, runnertest.Options{Store: d.st, Now: d.clk.Now, Provider: rt, Settings: d.set,
		Configure: func(c *runner.Config) {
			c.Node = "n2"
			c.Workspaces = runner.NewWorkspaces(d.nodeB)
			if configure != nil {
				configure(c)
			}
		}})
	d.clk.Advance(2 * time.Minute)
	return svc
}

// lostCalls lists the call ids of the task's journal outside any checkpoint.
func (d *deadRun) lostCalls(t *testing.T) []string {
	t.Helper()
	es, err := d.st.UncheckpointedCalls(context.Background(), d.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.CallID)
	}
	return ids
}

// TestTakeOverNamesLostChanges: the node that takes a dead node's
// workspace task over checks the branch out as checkpointed, and the
// model's next request carries a note naming exactly the lost write: not
// the checkpointed one, not a read. The run's end is a checkpoint again.
func TestTakeOverNamesLostChanges(t *testing.T) {
	const prompt = "write two files"
	d := newDeadRun(t, prompt)
	rt := newRouter()
	p := rt.script(prompt, answer("redone"))
	svc := d.takeOver(t, rt, nil)
	done := runnertest.WaitState(t, svc, d.task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
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
	evs := runnertest.Events(t, svc, d.task.ID, "workspace_changes_lost")
	var lost struct {
		Node  string
		Calls int
	}
	if len(evs) != 1 || json.Unmarshal(evs[0].Payload, &lost) != nil || lost.Calls != 1 || lost.Node != "n2" {
		t.Fatalf("workspace_changes_lost events: %+v", evs)
	}
	// The run's Finish is a checkpoint: a later continuation elsewhere
	// owes the model no note.
	if left := d.lostCalls(t); len(left) != 0 {
		t.Fatalf("after the finish, calls outside any checkpoint: %v", left)
	}
}

// TestTakeOverDrainedBeforeTheNoteKeepsItOwed: the taking-over run is
// drained while it runs a call still pending from the dead node, before
// its note on the lost changes reached the conversation. The hand-over's
// checkpoint then does not count the lost call as saved: the next node
// still owes the model the note.
func TestTakeOverDrainedBeforeTheNoteKeepsItOwed(t *testing.T) {
	const prompt = "write and wait"
	d := newDeadRun(t, prompt, bashCall("c3", "echo waiting > pending.txt; sleep 30"))
	rt := newRouter()
	p := rt.script(prompt, answer("should not be asked"))
	svc := d.takeOver(t, rt, func(c *runner.Config) { c.DrainTimeout = 100 * time.Millisecond })
	waitEvent(t, svc, d.task.ID, "tool_started")
	stopCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := svc.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	if got, err := d.st.Task(context.Background(), d.task.ID); err != nil || got.State != store.StateQueued {
		t.Fatalf("after the drain: %s %v", got.State, err)
	}
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times before the drain", n)
	}
	if left := d.lostCalls(t); !contains(fmt.Sprint(left), "4/c1") {
		t.Fatalf("calls outside any checkpoint after the drain: %v; want the lost 4/c1 among them", left)
	}
}
