package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// twoScratchNodes runs node a, hands the task it runs over with a's Stop
// once the task's "started" file exists, and starts node b on the same
// store. Each node has its own scratch root, as two machines would.
func twoScratchNodes(t *testing.T, rt *router, prompt string, limit int64) (b *runner.Service, task store.Task, scratchA, scratchB string) {
	t.Helper()
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	a := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Configure: func(c *runner.Config) {
		c.Node, scratchA, c.ScratchMoveLimit = "a", c.ScratchDir, limit
	}})
	task, _, err := a.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: prompt, Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(scratchA, task.ID, "started"))
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := a.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	b = runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Configure: func(c *runner.Config) {
		c.Node, scratchB = "b", c.ScratchDir
	}})
	return b, task, scratchA, scratchB
}

// TestScratchMovesWithHandOver: a scratch task handed over by a stopping
// node continues on the other node with its files — nested directories,
// an executable, a symbolic link — and the first node's copy is gone.
func TestScratchMovesWithHandOver(t *testing.T) {
	rt := newRouter()
	p := rt.script("scratch travels",
		calls(bashCall("c1", "mkdir -p sub/deep && echo hello > sub/deep/a.txt && printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod 755 run.sh && ln -s sub/deep/a.txt link && touch started && sleep 30")),
		calls(bashCall("c2", "cat link; ./run.sh; ls")),
		answer("moved"))
	b, task, scratchA, scratchB := twoScratchNodes(t, rt, "scratch travels", 0)
	done := runnertest.WaitState(t, b, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != "b" {
		t.Fatalf("handed over: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	if res := toolResult(p, "c2"); !strings.Contains(res, "hello") || !strings.Contains(res, "ran") || !strings.Contains(res, "started") {
		t.Fatalf("on node b the files are missing: %q", res)
	}
	if target, err := os.Readlink(filepath.Join(scratchB, task.ID, "link")); err != nil || target != "sub/deep/a.txt" {
		t.Fatalf("link on b = %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(scratchA, task.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("node a kept its copy: %v", err)
	}
	if len(runnertest.Events(t, b, task.ID, "scratch_moved")) != 1 || len(runnertest.Events(t, b, task.ID, "scratch_restored")) != 1 ||
		len(runnertest.Events(t, b, task.ID, "scratch_not_moved")) != 0 {
		t.Fatal("want one scratch_moved and one scratch_restored event")
	}
}

// TestScratchTooLargeStays: a scratch directory over the limit is not
// moved; the task continues on the other node without it, and its events
// say why.
func TestScratchTooLargeStays(t *testing.T) {
	rt := newRouter()
	p := rt.script("scratch too big",
		calls(bashCall("c1", "head -c 200000 /dev/urandom > big.bin && touch started && sleep 30")),
		calls(bashCall("c2", "ls")),
		answer("continued without the files"))
	b, task, scratchA, _ := twoScratchNodes(t, rt, "scratch too big", 64<<10)
	done := runnertest.WaitState(t, b, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded {
		t.Fatalf("handed over: %s %+v", done.State, done.Result)
	}
	if res := toolResult(p, "c2"); strings.Contains(res, "big.bin") {
		t.Fatalf("the file moved after all: %q", res)
	}
	evs := runnertest.Events(t, b, task.ID, "scratch_not_moved")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), "larger than 65536 bytes") || !strings.Contains(string(evs[0].Payload), "stay on node a") {
		t.Fatalf("scratch_not_moved events = %v", evs)
	}
	if _, err := os.Stat(filepath.Join(scratchA, task.ID, "big.bin")); err != nil {
		t.Fatalf("node a dropped the files it could not move: %v", err)
	}
}

// TestScratchMovesBetweenPostgresNodes: two live nodes share Postgres;
// whichever runs the scratch task is stopped mid-step, and the other
// continues it with its files.
func TestScratchMovesBetweenPostgresNodes(t *testing.T) {
	ctx := context.Background()
	open := storetest.SharedPostgres(t)
	rt := newRouter()
	p := rt.script("scratch between live nodes",
		calls(bashCall("c1", "echo kept > notes.txt && touch started && sleep 30")),
		calls(bashCall("c2", "cat notes.txt")),
		answer("done"))
	nodes := map[string]*runner.Service{}
	scratch := map[string]string{}
	for _, name := range []string{"pa", "pb"} {
		nodes[name] = runnertest.Start(t, runnertest.Options{Provider: rt, Store: open(), Configure: func(c *runner.Config) {
			c.Node, scratch[name] = name, c.ScratchDir
		}})
	}
	task, _, err := nodes["pa"].Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "scratch between live nodes", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	var first, second string
	eventually.NoError(t, 0, func() error {
		for name, other := range map[string]string{"pa": "pb", "pb": "pa"} {
			if _, err := os.Stat(filepath.Join(scratch[name], task.ID, "started")); err == nil {
				first, second = name, other
				return nil
			}
		}
		return errors.New("the task has not started on either node")
	})
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := nodes[first].Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, nodes[second], task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != second {
		t.Fatalf("handed over: %s on %s (first %s) %+v", done.State, done.LeaseOwner, first, done.Result)
	}
	if res := toolResult(p, "c2"); !strings.Contains(res, "kept") {
		t.Fatalf("on node %s the file is missing: %q", second, res)
	}
}

// scratchContinuation runs a scratch task that writes notes.txt to the end
// on node a, keeps a busy with a second task (its one worker taken), and
// starts node b, which is then the only node free to run the first task's
// continuation. configure adjusts b.
func scratchContinuation(t *testing.T, st *store.Store, rt *router, configure func(*runner.Config)) (a, b *runner.Service, task store.Task, scratchA, scratchB string) {
	t.Helper()
	ctx := context.Background()
	a = runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Settings: settings(1), Configure: func(c *runner.Config) {
		c.Node, scratchA = "a", c.ScratchDir
	}})
	task, _, err := a.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "notes", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runnertest.WaitState(t, a, task.ID, 0, store.StateSucceeded, store.StateFailed); got.State != store.StateSucceeded {
		t.Fatalf("first run: %s %+v", got.State, got.Result)
	}
	busy, _, err := a.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "busy", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(scratchA, busy.ID, "started"))
	t.Cleanup(func() { a.Cancel(context.Background(), busy.ID) })
	b = runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Configure: func(c *runner.Config) {
		c.Node, scratchB = "b", c.ScratchDir
		if configure != nil {
			configure(c)
		}
	}})
	return a, b, task, scratchA, scratchB
}

// scratchScripts scripts the tasks scratchContinuation runs: the task
// writes its notes, answers, and on its continuation reads them.
func scratchScripts(rt *router) *agenttest.ScriptedProvider {
	rt.script("busy", calls(bashCall("b1", "touch started && sleep 30")), answer("never"))
	return rt.script("notes",
		calls(bashCall("c1", "echo kept > notes.txt")), answer("written"),
		calls(bashCall("c2", "cat notes.txt || echo missing")), answer("read"))
}

// TestScratchFollowsContinuation: a finished scratch task continued by a
// reply on another node, while the node that ran it is alive, finds its
// files there: the first node hands the directory over when asked.
func TestScratchFollowsContinuation(t *testing.T) {
	rt := newRouter()
	p := scratchScripts(rt)
	a, b, task, scratchA, scratchB := scratchContinuation(t, storetest.SQLite(t, store.Config{}), rt, nil)
	start := time.Now()
	if _, err := b.Message(context.Background(), task.ID, runner.Principal{ID: "api:alice", Role: store.RoleAdmin}, "read them back"); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != "b" {
		t.Fatalf("continued: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	if res := toolResult(p, "c2"); !strings.Contains(res, "kept") {
		t.Fatalf("on node b the notes are missing: %q", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the continuation took %s; the hand-over should wake it at once", d)
	}
	if _, err := os.Stat(filepath.Join(scratchB, task.ID, "notes.txt")); err != nil {
		t.Fatalf("notes on b: %v", err)
	}
	if _, err := os.Stat(filepath.Join(scratchA, task.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("node a kept its copy: %v", err)
	}
	if len(runnertest.Events(t, a, task.ID, "scratch_moved")) != 1 || len(runnertest.Events(t, b, task.ID, "scratch_restored")) != 1 ||
		len(runnertest.Events(t, b, task.ID, "scratch_not_moved")) != 0 {
		t.Fatal("want one scratch_moved and one scratch_restored event, and no scratch_not_moved")
	}
}

// TestScratchNotWaitedForWithoutAnswer: a holder that is alive but never
// answers is waited for ScratchWait, no longer; the task then continues
// without its files and says so. A stopped holder is not waited for.
func TestScratchNotWaitedForWithoutAnswer(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		t.Run(map[bool]string{false: "silent", true: "stopped"}[stopped], func(t *testing.T) {
			rt := newRouter()
			p := scratchScripts(rt)
			const wait = 500 * time.Millisecond
			st := storetest.SQLite(t, store.Config{})
			a, b, task, _, _ := scratchContinuation(t, st, rt, func(c *runner.Config) { c.ScratchWait = wait })
			ctx := context.Background()
			if stopped {
				stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				if err := a.Stop(stopCtx); err != nil {
					t.Fatal(err)
				}
			} else {
				// Node a stays alive but deaf: its lease on the task is
				// handed to a node that beats but never answers.
				ghost := "ghost"
				if err := st.BeatNode(ctx, store.Node{ID: ghost, State: store.NodeRunning}); err != nil {
					t.Fatal(err)
				}
				if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateSucceeded}, store.StateSucceeded,
					&store.StateOpts{LeaseOwner: &ghost}); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if _, err := b.Message(ctx, task.ID, runner.Principal{ID: "api:alice", Role: store.RoleAdmin}, "read them back"); err != nil {
				t.Fatal(err)
			}
			done := runnertest.WaitState(t, b, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
			if done.State != store.StateSucceeded || done.LeaseOwner != "b" {
				t.Fatalf("continued: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
			}
			took := time.Since(start)
			if res := toolResult(p, "c2"); !strings.Contains(res, "missing") {
				t.Fatalf("node b found notes it cannot have: %q", res)
			}
			evs := runnertest.Events(t, b, task.ID, "scratch_not_moved")
			want := "did not hand over the task's scratch directory within 500ms"
			if stopped {
				want = "node a stopped with the task's scratch directory"
			}
			if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), want) {
				t.Fatalf("scratch_not_moved events = %v, want one saying %q", evs, want)
			}
			if !stopped && took < wait {
				t.Errorf("continued after %s, before the wait of %s", took, wait)
			}
		})
	}
}
