package runner_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// A budget card answered "Stop and publish what exists" whose push fails
// (the forge refuses the token) ends the task budget_exhausted with the
// failure said, and the publish retrier finishes the publish once the
// forge takes the push again: the branch and one pull request, in the
// task's result.
func TestBudgetCardStopAndPublishIsRetried(t *testing.T) {
	rt := newRouter()
	rt.script("add two files",
		calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": "# hello\n"})),
		calls(call("c2", "write_file", map[string]string{"path": "TWO.md", "content": "two\n"})), // past max_tool_calls
		answer("not reached"))
	// The store's clock, moved past the lease a failed attempt keeps.
	var ahead atomic.Int64
	st := storetest.SQLite(t, store.Config{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	b := newPublishBenchOn(t, st, forge.GitHub, rt, func(set *config.Config) { set.Runner.MaxToolCalls = 1 })
	ctx := context.Background()
	task, _, err := b.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "add two files",
		Workspace: "app", Posture: "auto", Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	card := waitPending(t, b.svc, task.ID)
	t.Setenv("REASONIX_TEST_FORGE_TOKEN", "not-the-token") // the push is refused
	if _, err := b.svc.Decide(ctx, runner.Decision{ApprovalID: card.ID, Decision: "stop_publish", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b.svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateBudgetExhausted || done.Result.PR != nil || !strings.Contains(done.Result.PublishError, "retried") {
		t.Fatalf("after a refused push: %s %+v", done.State, done.Result)
	}
	if len(b.srv.PRs()) != 0 || b.git.Ref(t, "refs/heads/reasonix/"+task.ID) != "" {
		t.Fatal("published with a refused token")
	}

	t.Setenv("REASONIX_TEST_FORGE_TOKEN", b.srv.Token())
	ahead.Store(int64(10 * time.Minute))
	eventually.True(t, 30*time.Second, func() bool {
		if err := b.svc.RetryPublishes(ctx); err != nil {
			t.Logf("retry: %v", err)
		}
		return len(b.srv.PRs()) == 1
	}, "the retried publish to open the pull request")
	if prs := b.srv.PRs(); prs[0].Head != "reasonix/"+task.ID {
		t.Fatalf("forge PRs = %+v", prs)
	}
	got, err := b.svc.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.StateBudgetExhausted || got.Result.Publish != "pr" || got.Result.PR == nil {
		t.Errorf("after the retry: %s %+v", got.State, got.Result)
	}
}
