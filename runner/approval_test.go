package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

func bashCall(id, cmd string) agent.ToolCall {
	return call(id, "bash", map[string]string{"command": cmd})
}

// waitPending waits for the task's pending approval.
func waitPending(t *testing.T, svc *runner.Service, taskID string) store.Approval {
	t.Helper()
	runnertest.WaitState(t, svc, taskID, 0, store.StateWaitingApproval)
	list, err := svc.Approvals(context.Background(), runner.ApprovalFilter{State: store.ApprovalPending, TaskID: taskID})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals of %s = %+v, %v", taskID, list, err)
	}
	return list[0]
}

func refusals(t *testing.T, svc *runner.Service, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range runnertest.Events(t, svc, id, "tool_refused") {
		var m map[string]any
		if err := json.Unmarshal(e.Payload, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestApprovalAllow: a call that needs a person parks the task without
// holding the only worker (another task runs to completion meanwhile); the
// requester may not approve it; an allowed approver's allow_once runs
// exactly that call, once, and the task succeeds.
func TestApprovalAllow(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	pa := rt.script("make out.txt", calls(bashCall("c1", "echo approved > out.txt")), answer("done"))
	rt.script("say hello", answer("hello"))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1),
		Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	a, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "make out.txt", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, a.ID)
	if ap.Tool != "bash" || !contains(ap.Preview, "echo approved > out.txt") || ap.CallHash == "" {
		t.Fatalf("approval = %+v", ap)
	}
	if _, err := os.Stat(filepath.Join(scratch, a.ID, "out.txt")); err == nil {
		t.Fatal("the call ran before it was approved")
	}
	// The single worker is free: another task runs to completion.
	b, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "say hello", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, b.ID, 0, store.StateSucceeded)
	if got := runnertest.WaitState(t, svc, a.ID, 0, store.StateWaitingApproval); got.State != store.StateWaitingApproval {
		t.Fatal("unreachable")
	}

	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "api:alice", Role: store.RoleApprove}); !errors.Is(err, runner.ErrForbidden) {
		t.Fatalf("self-approval: %v, want ErrForbidden", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", CallHash: "0000", Role: store.RoleApprove}); !errors.Is(err, runner.ErrConflict) {
		t.Fatalf("decision bound to another call: %v, want ErrConflict", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", CallHash: ap.CallHash, Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "deny", Approver: "carol", Role: store.RoleApprove}); !errors.Is(err, runner.ErrConflict) {
		t.Fatalf("second decision: %v, want ErrConflict", err)
	}
	done := runnertest.WaitState(t, svc, a.ID, 0, store.StateSucceeded, store.StateBlocked, store.StateFailed)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s (%+v)", done.State, done.Result)
	}
	out, err := os.ReadFile(filepath.Join(scratch, a.ID, "out.txt"))
	if err != nil || string(out) != "approved\n" {
		t.Fatalf("out.txt = %q, %v", out, err)
	}
	if n := len(runnertest.Events(t, svc, a.ID, "tool_started")); n != 1 {
		t.Fatalf("the approved call started %d times", n)
	}
	if len(runnertest.Events(t, svc, a.ID, "approval_requested")) != 1 || len(runnertest.Events(t, svc, a.ID, "approval_decided")) != 1 {
		t.Fatal("approval events missing")
	}
	if pa.Remaining() != 0 {
		t.Fatalf("%d turns left", pa.Remaining())
	}
}

// TestApprovalDeny: a denial refuses the call with code declined and the
// approver's note reaches the model; the task ends blocked.
func TestApprovalDeny(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	p := rt.script("delete things", calls(bashCall("c1", "rm -rf build")), answer("could not"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "delete things"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "deny", Approver: "bob", Note: "use make clean", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateBlocked {
		t.Fatalf("state = %s", done.State)
	}
	r := refusals(t, svc, task.ID)
	if len(r) != 1 || r[0]["code"] != "declined" {
		t.Fatalf("refusals = %v", r)
	}
	if got := toolResult(p, "c1"); !contains(got, "use make clean") {
		t.Fatalf("the model was told %q", got)
	}
}

// TestApprovalExpiry: nobody answers before the deadline (an injected
// clock jumps past it); the sweeper expires the approval and the task's call
// is refused with code expired.
func TestApprovalExpiry(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	rt := newRouter()
	rt.script("risky", calls(bashCall("c1", "make deploy")), answer("gave up"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Now: clk.Now})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "risky"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if d := ap.ExpiresAt.Sub(ap.CreatedAt); d < 29*time.Minute || d > 31*time.Minute {
		t.Fatalf("approval TTL = %s, want the 30m default", d)
	}
	clk.Advance(31 * time.Minute)
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateBlocked {
		t.Fatalf("state = %s", done.State)
	}
	if r := refusals(t, svc, task.ID); len(r) != 1 || r[0]["code"] != "expired" {
		t.Fatalf("refusals = %v", r)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); !errors.Is(err, runner.ErrConflict) && !errors.Is(err, runner.ErrExpired) {
		t.Fatalf("late decision: %v", err)
	}
}

// TestUnattendedFailsClosed: a webhook task with nobody to ask is refused
// at once with code unattended; no approval is created.
func TestUnattendedFailsClosed(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("ci failed", calls(bashCall("c1", "git push --force")), answer("blocked"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceWebhook, Requester: "webhook:gh", Prompt: "ci failed"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateSucceeded, store.StateFailed, store.StateWaitingApproval)
	if done.State != store.StateBlocked {
		t.Fatalf("state = %s", done.State)
	}
	if r := refusals(t, svc, task.ID); len(r) != 1 || r[0]["code"] != "unattended" {
		t.Fatalf("refusals = %v", r)
	}
	if list, _ := svc.Approvals(ctx, runner.ApprovalFilter{TaskID: task.ID}); len(list) != 0 {
		t.Fatalf("approvals = %+v", list)
	}
}

// TestAllowForTask: allow_task grants the offered scope; a later identical
// call in the same task runs without asking again.
func TestAllowForTask(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("twice", calls(bashCall("c1", "echo one >> log.txt")), calls(bashCall("c2", "echo one >> log.txt")), answer("done"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "twice"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if len(ap.Scopes) == 0 {
		t.Fatalf("no scopes offered: %+v", ap)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_task", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateBlocked, store.StateFailed)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s", done.State)
	}
	if n := len(runnertest.Events(t, svc, task.ID, "approval_requested")); n != 1 {
		t.Fatalf("%d approval requests, want 1", n)
	}
}

// TestAnApprovedEditResumesWithWhatItRead: the run that resumes after an
// approval is a new one, and still counts what the conversation read (the
// edit would otherwise be refused as unread).
func TestAnApprovedEditResumesWithWhatItRead(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("edit a.txt",
		calls(call("w", "write_file", map[string]string{"path": "a.txt", "content": "one\n"})),
		calls(call("r", "read_file", map[string]string{"path": "a.txt"})),
		calls(call("e", "edit_file", map[string]string{"path": "a.txt", "old_string": "one", "new_string": "ONE"})),
		answer("done"))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1),
		Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "edit a.txt", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"write_file", "edit_file"} {
		var ap store.Approval
		eventually.True(t, 30*time.Second, func() bool {
			list, err := svc.Approvals(ctx, runner.ApprovalFilter{State: store.ApprovalPending, TaskID: task.ID})
			if err != nil || len(list) != 1 {
				return false
			}
			ap = list[0]
			return true
		}, "a pending approval for %s", tool)
		if ap.Tool != tool {
			t.Fatalf("pending approval for %s, want %s", ap.Tool, tool)
		}
		if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", CallHash: ap.CallHash, Role: store.RoleApprove}); err != nil {
			t.Fatal(err)
		}
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateBlocked, store.StateFailed)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s (%+v)", done.State, done.Result)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, task.ID, "a.txt")); err != nil || string(b) != "ONE\n" {
		t.Fatalf("a.txt = %q, %v", b, err)
	}
}
