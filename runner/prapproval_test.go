package runner_test

import (
	"context"
	"errors"
	"testing"

	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// askBench runs one task under mode = "ask" and returns it once it ended,
// its branch pushed, with the pending "Open pull request" approval.
func askBench(t *testing.T, waitCI bool) (*ciBench, store.Task, store.Approval) {
	t.Helper()
	rt := newRouter()
	rt.script("add a readme",
		calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": "# hello\n"})),
		answer("Added README.md."))
	b := newForgeBench(t, rt, func(p *config.Publish) { p.Mode, p.WaitCI = config.PublishAsk, waitCI })
	task, _, err := b.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice",
		Prompt: "add a readme", Workspace: "app", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.StateSucceeded
	if waitCI {
		want = store.StateWaitingCI
	}
	done := runnertest.WaitState(t, b.svc, task.ID, 0, want, store.StateFailed)
	if done.State != want || done.Result.Publish != "awaiting_approval" {
		t.Fatalf("state %s, result %+v", done.State, done.Result)
	}
	if len(b.srv.PRs()) != 0 || b.git.Ref(t, "refs/heads/reasonix/"+task.ID) == "" {
		t.Fatalf("before the approval: PRs %+v, branch %q", b.srv.PRs(), b.git.Ref(t, "refs/heads/reasonix/"+task.ID))
	}
	pending, err := b.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: task.ID, State: store.ApprovalPending})
	if err != nil || len(pending) != 1 || pending[0].Tool != runner.PRApprovalTool {
		t.Fatalf("pending approvals = %+v, %v", pending, err)
	}
	if evs := runnertest.Events(t, b.svc, task.ID, "approval_requested"); len(evs) != 1 {
		t.Fatalf("approval_requested events = %d", len(evs))
	}
	return b, done, pending[0]
}

// mode = "ask": the requester may not open their own task's pull request;
// another approver may, and the request opens at once, exactly once.
func TestPublishAskOpensOnApproval(t *testing.T) {
	b, task, a := askBench(t, false)
	ctx := context.Background()
	_, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: a.ID, Decision: "allow_once", Approver: "token:alice", Role: store.RoleApprove})
	if !errors.Is(err, runner.ErrForbidden) {
		t.Fatalf("the requester's own decision: %v", err)
	}
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: a.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	prs := b.srv.PRs()
	if len(prs) != 1 || prs[0].Head != "reasonix/"+task.ID {
		t.Fatalf("PRs after the approval = %+v", prs)
	}
	got, err := b.svc.Task(ctx, task.ID)
	if err != nil || got.Result.Publish != "pr" || got.Result.PR == nil || got.Result.PR.Number != prs[0].Number {
		t.Fatalf("result after the approval = %+v, %v", got.Result, err)
	}
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: a.ID, Decision: "allow_once", Approver: "token:carol", Role: store.RoleApprove}); !errors.Is(err, runner.ErrConflict) {
		t.Errorf("a second decision: %v", err)
	}
	if len(b.srv.PRs()) != 1 {
		t.Errorf("PRs = %+v", b.srv.PRs())
	}
}

// Declined, the branch stays pushed and no pull request opens.
func TestPublishAskDeclined(t *testing.T) {
	b, task, a := askBench(t, false)
	ctx := context.Background()
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: a.ID, Decision: "deny", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.Task(ctx, task.ID)
	if err != nil || got.Result.Publish != "branch" || got.Result.PR != nil {
		t.Fatalf("result after the denial = %+v, %v", got.Result, err)
	}
	if len(b.srv.PRs()) != 0 || b.git.Ref(t, "refs/heads/reasonix/"+task.ID) == "" {
		t.Errorf("after the denial: PRs %+v", b.srv.PRs())
	}
}

// With wait_ci, the task waits for CI on its pushed branch while the
// approval is pending; the approval opens the request, and green CI ends it.
func TestPublishAskThenCI(t *testing.T) {
	b, task, a := askBench(t, true)
	ctx := context.Background()
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: a.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 0, func() bool { return len(b.srv.PRs()) == 1 }, "the pull request opened")
	_, sha := b.waiting(t, task.ID, "")
	b.srv.SetChecks(sha, forgetestCheck("test", true))
	b.wake(t, b.svc, sha)
	done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed)
	if ci := ciOf(t, done); done.State != store.StateSucceeded || ci.State != store.CISuccess || done.Result.Publish != "pr" || done.Result.PR.URL == "" {
		t.Fatalf("state %s, result %+v", done.State, done.Result)
	}
}
