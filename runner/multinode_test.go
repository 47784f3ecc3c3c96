package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// echoProvider answers every request with a final answer at once.
type echoProvider struct{}

func (echoProvider) Name() string { return "echo" }

func (echoProvider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	return agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}).Stream(ctx, req)
}

// TestTwoNodesPostgres: two services share one Postgres database. Over many
// tasks none runs twice, and an approval decided through one node resumes
// the task on either.
func TestTwoNodesPostgres(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	rt := newRouter()
	rt.script("approve on the other node", calls(bashCall("c1", "echo hi > f")), answer("done"))
	prov := &fallback{rt: rt}
	a := runnertest.Start(t, runnertest.Options{Provider: prov, Store: open(), Configure: func(c *runner.Config) { c.Node = "A" }})
	b := runnertest.Start(t, runnertest.Options{Provider: prov, Store: open(), Configure: func(c *runner.Config) { c.Node = "B" }})

	const n = 40
	ids := make([]string, n)
	for i := range n {
		svc := a
		if i%2 == 1 {
			svc = b
		}
		task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint("task ", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = task.ID
	}
	nodes := map[string]int{}
	for _, id := range ids {
		done := runnertest.WaitState(t, a, id, 0, store.StateSucceeded, store.StateFailed)
		if done.State != store.StateSucceeded || done.Attempt != 1 {
			t.Fatalf("task %s: %s after %d attempts", id, done.State, done.Attempt)
		}
		if runs := len(runnertest.Events(t, a, id, "run_finished")); runs != 1 {
			t.Fatalf("task %s ran %d times", id, runs)
		}
		nodes[done.LeaseOwner]++
	}
	t.Logf("tasks per node: %v", nodes)

	task, _, err := a.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "approve on the other node"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, a, task.ID)
	if _, err := b.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, a, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s", done.State)
	}
}

// fallback routes scripted prompts and answers everything else at once.
type fallback struct{ rt *router }

func (f *fallback) Name() string { return "fallback" }

func (f *fallback) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			f.rt.mu.Lock()
			_, ok := f.rt.scripts[m.Content]
			f.rt.mu.Unlock()
			if ok {
				return f.rt.Stream(ctx, req)
			}
			break
		}
	}
	return echoProvider{}.Stream(ctx, req)
}

// TestLeaderSweepsAlone: of two nodes on one Postgres database exactly one
// runs the maintenance sweeps at a time — River's elected leader — and
// when it stops the other takes over. Nodes lists both, the leader marked.
func TestLeaderSweepsAlone(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	start := func(node string) *runner.Service {
		return runnertest.Start(t, runnertest.Options{Provider: echoProvider{}, Store: open(), Configure: func(c *runner.Config) {
			c.Node, c.Version = node, "test-"+node
		}})
	}
	a, b := start("A"), start("B")
	// Wait until one of them leads, then watch it sweep 4 more times (6 s
	// at runnertest's interval: with no approval pending, the expirer looks
	// every 15 sweep intervals): only that one sweeps. Counting the
	// leader's sweeps, not the clock, gives the follower the same number of
	// intervals to sweep in however slow the machine.
	var leader, other *runner.Service
	eventually.NoError(t, 20*time.Second, func() error {
		switch {
		case a.Sweeps() > 0 && b.Sweeps() == 0:
			leader, other = a, b
		case b.Sweeps() > 0 && a.Sweeps() == 0:
			leader, other = b, a
		default:
			return fmt.Errorf("sweeps: A %d, B %d", a.Sweeps(), b.Sweeps())
		}
		return nil
	})
	l0 := leader.Sweeps()
	eventually.True(t, 30*time.Second, func() bool { return leader.Sweeps() >= l0+4 }, "the leader did not sweep 4 times after its sweep %d", l0)
	if n := other.Sweeps(); n != 0 {
		t.Fatalf("the follower swept %d times while the leader swept from %d to %d", n, l0, leader.Sweeps())
	}
	nodes, err := a.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 {
		t.Fatalf("nodes = %+v", nodes)
	}
	for _, n := range nodes {
		if n.Leader != (n.ID == leader.Node()) || n.State != store.NodeRunning || n.Stale || n.Version != "test-"+n.ID {
			t.Fatalf("node %+v (leader %s)", n, leader.Node())
		}
	}

	// The leader stops: the other node is elected and sweeps from then on.
	if err := leader.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := leader.Sweeps()
	eventually.NoError(t, 30*time.Second, func() error {
		if other.Sweeps() == 0 {
			return errors.New("the follower has not taken over")
		}
		return nil
	})
	if leader.Sweeps() != stopped {
		t.Fatal("a stopped node swept")
	}
	nodes, err = other.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		wantState := store.NodeRunning
		if n.ID == leader.Node() {
			wantState = store.NodeStopped
		}
		if n.State != wantState || n.Leader != (n.ID == other.Node()) {
			t.Fatalf("after the leader stopped: %+v", n)
		}
	}
}
