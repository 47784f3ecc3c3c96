package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// waitEvent waits until the task has an event of type typ.
func waitEvent(t *testing.T, svc *runner.Service, id, typ string) {
	t.Helper()
	eventually.True(t, 0, func() bool { return len(runnertest.Events(t, svc, id, typ)) > 0 },
		"task %s has no %s event", id, typ)
}

// lifecycle is the task's log reduced to its state changes and the events
// written with them, in log order: "queued", "running n1", "released n1",
// "report", "succeeded", …
func lifecycle(t *testing.T, svc *runner.Service, id string) string {
	t.Helper()
	var out []string
	for _, e := range runnertest.Events(t, svc, id, "task_state", "task_released", "final_report", "task_interrupted") {
		var p struct{ State, Node string }
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "task_state":
			out = append(out, strings.TrimSpace(p.State+" "+p.Node))
		case "task_released":
			out = append(out, "released "+p.Node)
		case "final_report":
			out = append(out, "report")
		default:
			out = append(out, "interrupted")
		}
	}
	return strings.Join(out, ", ")
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	eventually.NoError(t, 0, func() error { _, err := os.Stat(path); return err })
}

// TestCancel: a running task (in a long shell command) and a queued one are
// both cancelled promptly; the running command is killed.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("sleep long", calls(bashCall("c1", "sleep 30")), answer("woke"))
	rt.script("queued behind", answer("never"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1)})
	run, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "sleep long", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, svc, run.ID, "tool_started")
	queued, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "queued behind", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Cancel(ctx, queued.ID)
	if err != nil || got.State != store.StateCancelled {
		t.Fatalf("cancel queued = %+v, %v", got.State, err)
	}
	start := time.Now()
	if _, err := svc.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, run.ID, 0, store.StateCancelled, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateCancelled || time.Since(start) > 5*time.Second {
		t.Fatalf("running task: %s after %s", done.State, time.Since(start))
	}
	if _, err := svc.Cancel(ctx, run.ID); !errors.Is(err, runner.ErrConflict) {
		t.Fatalf("cancel of a cancelled task: %v", err)
	}
	if got := runnertest.WaitState(t, svc, queued.ID, 0, store.StateCancelled); got.Attempt != 0 {
		t.Fatalf("the cancelled queued task ran %d times", got.Attempt)
	}
}

// TestCancelStopsBackgroundJobs: a background job a task started (bash
// with run_in_background) ends with the task's run when the task is
// cancelled: no process of it is left.
func TestCancelStopsBackgroundJobs(t *testing.T) {
	ctx := context.Background()
	marker := fmt.Sprintf("%d.%03d", 3000+os.Getpid()%1000, time.Now().Nanosecond()%1000)
	rt := newRouter()
	rt.script("start a job",
		calls(call("j", "bash", map[string]any{"command": "sleep " + marker, "run_in_background": true})),
		calls(bashCall("f", "sleep 30")), answer("never"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1)})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "start a job", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	running := func() bool { return processWithArgs("sleep", marker) }
	eventually.True(t, 0, func() bool {
		return running() && len(runnertest.Events(t, svc, task.ID, "tool_started")) == 2
	}, "the background job and the foreground command to run")
	if _, err := svc.Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if done := runnertest.WaitState(t, svc, task.ID, 0, store.StateCancelled, store.StateSucceeded, store.StateFailed); done.State != store.StateCancelled {
		t.Fatalf("state = %s", done.State)
	}
	eventually.True(t, 10*time.Second, func() bool { return !running() }, "the background job outlived its cancelled task")
}

// processWithArgs reports whether a process on this machine runs with
// exactly these arguments.
func processWithArgs(args ...string) bool {
	want := strings.Join(args, "\x00") + "\x00"
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil && string(b) == want {
			return true
		}
	}
	return false
}

// TestStopHandsOver: Stop lets a running step go on for the drain timeout,
// then cuts it and hands the task over: it is queued again with an event,
// and another node continues it to success without anyone resuming it.
func TestStopHandsOver(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	rt := newRouter()
	p := rt.script("sleep then answer", calls(bashCall("c1", "touch started; sleep 30")), answer("resumed fine"))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Configure: func(c *runner.Config) {
		c.Node = "n1"
		c.DrainTimeout = 300 * time.Millisecond
		scratch = c.ScratchDir
	}})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "sleep then answer", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(scratch, task.ID, "started"))
	start := time.Now()
	stopCtx, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()
	if err := svc.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Stop took %s; the drain is 300ms", d)
	}
	got, err := st.Task(ctx, task.ID)
	if err != nil || got.State != store.StateQueued {
		t.Fatalf("after Stop: %s, %v", got.State, err)
	}
	if _, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "late"}); !errors.Is(err, runner.ErrUnavailable) {
		t.Fatalf("Submit after Stop: %v", err)
	}
	if len(runnertest.Events(t, svc, task.ID, "task_released")) != 1 || len(runnertest.Events(t, svc, task.ID, "task_interrupted")) != 0 {
		t.Fatal("want one task_released event and no task_interrupted")
	}
	// Another node on the same store continues it by itself.
	svc2 := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Configure: func(c *runner.Config) { c.Node = "n2" }})
	done := runnertest.WaitState(t, svc2, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.Result.FinalAnswer != "resumed fine" || done.LeaseOwner != "n2" {
		t.Fatalf("handed over: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	// The hand-over's events are written with it, so they come before the
	// next node's.
	if got, want := lifecycle(t, svc2, task.ID), "queued, running n1, released n1, queued, running n2, report, succeeded"; got != want {
		t.Fatalf("log:\n got %s\nwant %s", got, want)
	}
	// The shell command was killed by the drain, and the model is told so.
	if res := toolResult(p, "c1"); !contains(res, "killed") {
		t.Fatalf("the interrupted shell call was reported as %q", res)
	}
}

// TestStopDrains: a step that ends within the drain timeout finishes on
// the stopping node, and Stop returns as soon as nothing runs.
func TestStopDrains(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("short step", calls(bashCall("c1", "touch started; sleep 1; echo ok")), answer("finished while draining"))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Configure: func(c *runner.Config) {
		c.DrainTimeout = 20 * time.Second
		scratch = c.ScratchDir
	}})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "short step", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(scratch, task.ID, "started"))
	start := time.Now()
	if err := svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Stop took %s for a one-second step", d)
	}
	got, err := svc.Task(ctx, task.ID)
	if err != nil || got.State != store.StateSucceeded || got.Result.FinalAnswer != "finished while draining" {
		t.Fatalf("after the drain: %s %+v %v", got.State, got.Result, err)
	}
}

// TestCrashRecovery: tasks left running by a crashed node are marked
// interrupted at Start and not run again by their old job; Resume rebuilds
// the session with the journal rules: a finished call's result is reused,
// a started-but-unfinished writer is reported as unknown and not re-run, a
// call that never started runs.
func TestCrashRecovery(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "api:a", Prompt: "recover me", Posture: "auto"}, "")
	if err != nil {
		t.Fatal(err)
	}
	node := "crashed-node"
	if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &node}); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	dir := filepath.Join(scratch, task.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("input\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	asst := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		call("c1", "write_file", map[string]string{"path": "half.txt", "content": "x"}),
		call("c2", "write_file", map[string]string{"path": "done.txt", "content": "y"}),
		call("c3", "read_file", map[string]string{"path": "in.txt"}),
	}}
	if _, err := st.AppendMessages(ctx, task.ID, agent.Message{Role: agent.RoleUser, Content: "recover me"}, asst); err != nil {
		t.Fatal(err)
	}
	// Journal keys are "<assistant message seq>/<call id>"; the assistant
	// message is the second message.
	for _, c := range []string{"c1", "c2"} {
		if err := st.JournalStart(ctx, task.ID, "2/"+c, "write_file", "h", "{}"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.JournalFinish(ctx, task.ID, "2/c2", "wrote done.txt earlier", false); err != nil {
		t.Fatal(err)
	}

	rt := newRouter()
	p := rt.script("recover me", answer("recovered"))
	rt.script("after the old job", answer("ran"))
	// One worker, so the queue runs jobs one at a time in the order they
	// were enqueued.
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Store: st, Settings: settings(1), Configure: func(c *runner.Config) {
		c.Node = node
		c.ScratchDir = scratch
	}})
	got := runnertest.WaitState(t, svc, task.ID, 0, store.StateInterrupted)
	waitEvent(t, svc, task.ID, "task_interrupted")
	// The old job runs and must leave the task alone. A task submitted now
	// queues behind it on the single worker: once that one has run, so has
	// the old job.
	after, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "after the old job"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, after.ID, 0, store.StateSucceeded)
	if again, _ := svc.Task(ctx, task.ID); again.State != store.StateInterrupted || again.Attempt != got.Attempt {
		t.Fatalf("the crashed task was run again without a resume: %s attempt %d", again.State, again.Attempt)
	}
	if _, err := svc.Resume(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s %+v", done.State, done.Result)
	}
	if r := toolResult(p, "c1"); !contains(r, "outcome of this call is unknown") {
		t.Errorf("c1 (unfinished writer) = %q", r)
	}
	if r := toolResult(p, "c2"); r != "wrote done.txt earlier" {
		t.Errorf("c2 (finished) = %q", r)
	}
	if r := toolResult(p, "c3"); !contains(r, "input") {
		t.Errorf("c3 (never started) = %q", r)
	}
	for _, f := range []string{"half.txt", "done.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written again on resume", f)
		}
	}
	var started []string
	for _, e := range runnertest.Events(t, svc, task.ID, "tool_started") {
		var m map[string]any
		_ = json.Unmarshal(e.Payload, &m)
		started = append(started, m["call_id"].(string))
	}
	if len(started) != 1 || started[0] != "c3" {
		t.Fatalf("tools run on resume: %v, want only c3", started)
	}
}

// TestMessageContinues: a message to a finished task continues the same
// conversation with the new user message.
func TestMessageContinues(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	p := rt.script("first", answer("first answer"), answer("second answer"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "first"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	if _, err := svc.Message(ctx, task.ID, runner.Principal{ID: "api:a", Role: store.RoleAdmin}, "and now more"); err != nil {
		t.Fatal(err)
	}
	var done store.Task
	eventually.NoError(t, 0, func() error {
		done, _ = svc.Task(ctx, task.ID)
		if done.State != store.StateSucceeded || done.Result == nil || done.Result.FinalAnswer != "second answer" {
			return fmt.Errorf("continued task = %s %+v", done.State, done.Result)
		}
		return nil
	})
	reqs := p.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) < 4 || msgs[len(msgs)-1].Content != "and now more" || msgs[len(msgs)-2].Content != "first answer" {
		t.Fatalf("continuation request = %+v", msgs)
	}
}

// TestDeadNodeSweep: a task running on another node whose heartbeats stop
// is taken over by a live node's sweeper, without a restart or a resume.
func TestDeadNodeSweep(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Prompt: "elsewhere"}, "")
	if err != nil {
		t.Fatal(err)
	}
	other := "other-node"
	if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &other}); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	rt := newRouter()
	rt.script("elsewhere", answer("taken over"))
	svc := runnertest.Start(t, runnertest.Options{Store: st, Now: clk.Now, Provider: rt})
	if got, _ := svc.Task(ctx, task.ID); got.State != store.StateRunning {
		t.Fatalf("a live node's task was touched at start: %s", got.State)
	}
	clk.Advance(2 * time.Minute)
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateInterrupted)
	if done.State != store.StateSucceeded || done.LeaseOwner != svc.Node() || done.Result.FinalAnswer != "taken over" {
		t.Fatalf("dead node's task: %s on %s %+v", done.State, done.LeaseOwner, done.Result)
	}
	node := svc.Node()
	if got, want := lifecycle(t, svc, task.ID), "released "+node+", queued, running "+node+", report, succeeded"; got != want {
		t.Fatalf("log:\n got %s\nwant %s", got, want)
	}
}

// TestBudgets: the task's tool-call cap ends a run as budget_exhausted.
func TestBudgets(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("many calls",
		calls(call("c1", "write_file", map[string]string{"path": "a", "content": "1"})),
		calls(call("c2", "write_file", map[string]string{"path": "b", "content": "2"})),
		answer("done"))
	set := settings(2)
	set.Runner.MaxToolCalls = 1
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "many calls", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "tool_budget" || !contains(done.Result.Reason, "tool-call budget") {
		t.Fatalf("state = %s %+v", done.State, done.Result)
	}
}

// panicProvider crashes the run that uses it.
type panicProvider struct{}

func (panicProvider) Name() string { return "panic" }

func (panicProvider) Stream(context.Context, agent.Request) (<-chan agent.Chunk, error) {
	panic("provider bug")
}

// TestPanicFailsTask: a panic inside a run fails that task, with a safe
// error and a log reference, and the service keeps working.
func TestPanicFailsTask(t *testing.T) {
	ctx := context.Background()
	svc := runnertest.Start(t, runnertest.Options{Provider: panicProvider{}})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateFailed, store.StateSucceeded)
	if done.State != store.StateFailed || !contains(done.Result.Error, "internal (ref ") || contains(done.Result.Error, "provider bug") ||
		!contains(done.Result.Reason, "quote the reference") {
		t.Fatalf("state = %s %+v", done.State, done.Result)
	}
	if err := svc.Ready(ctx); err != nil {
		t.Fatalf("service not ready after a panic: %v", err)
	}
}
