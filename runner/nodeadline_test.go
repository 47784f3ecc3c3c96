package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// With [runner] approval_ttl = "none" a request is stored without a
// deadline, its event says no_deadline rather than a zero time, and a
// route's own approval_ttl still gives its tasks one. Cancelling the task
// closes the waiting request (expired, with an approval_decided event),
// so it is not left pending for ever.
func TestApprovalWithoutDeadlineClosesOnCancel(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("make out.txt", calls(bashCall("c1", "echo approved > out.txt")), answer("done"))
	rt.script("make two.txt", calls(bashCall("c1", "echo approved > two.txt")), answer("done"))
	set := settings(2)
	set.Runner.ApprovalTTL = config.NoTTL
	set.Bot.Routes = []config.BotRoute{{Transport: "slack", Channel: "C9", ApprovalTTL: config.TTL(2 * time.Hour)}}
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	a, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "make out.txt", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, a.ID)
	if !ap.NoDeadline() || !ap.ExpiresAt.IsZero() {
		t.Fatalf("approval = %+v, want no deadline", ap)
	}
	evs := runnertest.Events(t, svc, a.ID, "approval_requested")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"no_deadline":true`) || strings.Contains(string(evs[0].Payload), "expires_at") {
		t.Errorf("approval_requested = %v", evs)
	}
	routed, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "make two.txt", Posture: "ask",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C9"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := waitPending(t, svc, routed.ID)
	if d := r.ExpiresAt.Sub(r.CreatedAt); r.NoDeadline() || d < 2*time.Hour-time.Second || d > 2*time.Hour+time.Second {
		t.Errorf("the route's request = %+v, want a 2h deadline", r)
	}

	runnertest.WaitState(t, svc, a.ID, 0, store.StateWaitingApproval)
	if _, err := svc.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Approval(ctx, ap.ID)
	if err != nil || got.State != store.ApprovalExpired {
		t.Fatalf("after the cancel the request is %+v, %v", got, err)
	}
	if evs := runnertest.Events(t, svc, a.ID, "approval_decided"); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), "expired") {
		t.Errorf("approval_decided = %v", evs)
	}
	if done := runnertest.WaitState(t, svc, a.ID, 0, store.StateCancelled); done.State != store.StateCancelled {
		t.Fatalf("task = %s", done.State)
	}
}
