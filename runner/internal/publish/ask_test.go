package publish_test

import (
	"context"
	"testing"

	"reasonix/runner/forge"
	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
)

// ModeAsk: while the approval is pending the branch is pushed, no pull
// request opens, and the record is released without an attempt counted,
// so that another publisher (the one after the decision) takes it at once;
// allowed, the request opens once; a later drive changes nothing.
func TestAskOpensOnlyOnceAllowed(t *testing.T) {
	b := newBench(t, forge.GitHub)
	b.succeed()
	ctx := context.Background()
	answer, asked := publish.ApprovalPending, 0
	tg := b.target(publish.ModeAsk)
	tg.Approve = func(_ context.Context, rec store.PublishRecord) (publish.Approval, error) {
		if rec.Commit != b.commit {
			t.Errorf("asked about %s, want %s", rec.Commit, b.commit)
		}
		asked++
		return answer, nil
	}
	for range 3 {
		out, err := b.publisher("node-a", nil).Drive(ctx, b.task, tg)
		if err != nil || !out.Awaiting {
			t.Fatalf("Drive while pending = %+v, %v", out, err)
		}
	}
	rec, err := b.st.Publish(ctx, b.task)
	if err != nil || rec.State != store.PublishPushed || rec.Attempts != 0 || len(b.srv.PRs()) != 0 ||
		b.git.Ref(t, "refs/heads/"+b.branch) != b.commit {
		t.Fatalf("while pending: record %+v, %v, PRs %+v", rec, err, b.srv.PRs())
	}
	answer = publish.ApprovalAllowed
	out, err := b.publisher("node-b", nil).Drive(ctx, b.task, tg) // another node: the lease is free
	if err != nil || out.PR == nil || out.Awaiting {
		t.Fatalf("Drive once allowed = %+v, %v", out, err)
	}
	b.assertOnce()
	if asked != 4 {
		t.Errorf("asked %d times, want 4", asked)
	}
}

// ModeAsk declined: the branch stays pushed, no pull request, the record
// done and the result says "branch".
func TestAskDeclined(t *testing.T) {
	b := newBench(t, forge.GitLab)
	b.succeed()
	tg := b.target(publish.ModeAsk)
	tg.Approve = func(context.Context, store.PublishRecord) (publish.Approval, error) {
		return publish.ApprovalDenied, nil
	}
	out, err := b.publisher("node-a", nil).Drive(context.Background(), b.task, tg)
	if err != nil || !out.Declined || out.PR != nil {
		t.Fatalf("Drive declined = %+v, %v", out, err)
	}
	rec, _ := b.st.Publish(context.Background(), b.task)
	task, _ := b.st.Task(context.Background(), b.task)
	if rec.State != store.PublishDone || len(b.srv.PRs()) != 0 || task.Result == nil || task.Result.Publish != "branch" {
		t.Fatalf("record %+v, PRs %+v, result %+v", rec, b.srv.PRs(), task.Result)
	}
}
