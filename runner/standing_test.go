package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// nightly submits one run of the schedule "nightly" (a cron task with a
// chat target, so a person can be asked) whose model runs cmd.
func nightly(t *testing.T, svc *runner.Service, rt *router, prompt, cmd string) store.Task {
	t.Helper()
	rt.script(prompt, calls(bashCall("c1", cmd)), answer("done"))
	task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceCron, Requester: "schedule:nightly",
		Prompt: prompt, Posture: "ask", Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1"}}})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func finished(t *testing.T, svc *runner.Service, id string) store.Task {
	t.Helper()
	return runnertest.WaitState(t, svc, id, time.Minute, store.StateSucceeded, store.StateBlocked, store.StateFailed)
}

// TestAllowAlways: an admin's Allow always on a nightly run's call makes a
// standing grant for the schedule, so the next night's run is not asked
// for the same command (and the use is recorded on it); a deny rule still
// refuses what the grant's prefix would cover; the requester and an
// approver without the grant role may not choose it; a revoked grant
// allows nothing, so the run after it is asked again.
func TestAllowAlways(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	set := settings(2)
	set.Permissions.Deny = append(set.Permissions.Deny, "Bash(touch secret:*)")
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})

	first := nightly(t, svc, rt, "night 1", "touch a.txt")
	ap := waitPending(t, svc, first.ID)
	if got := runner.SuggestedScope(ap.Scopes); got != "Bash(touch:*)" {
		t.Fatalf("suggested scope %q of %v", got, ap.Scopes)
	}
	always := runner.Decision{ApprovalID: ap.ID, Decision: "allow_always", CallHash: ap.CallHash}
	for _, who := range []struct {
		id   string
		role store.Role
	}{{"schedule:nightly", store.RoleAdmin}, {"token:bob", store.RoleApprove}} {
		d := always
		d.Approver, d.Role = who.id, who.role
		if _, err := svc.Decide(ctx, d); !errors.Is(err, runner.ErrForbidden) {
			t.Errorf("allow_always by %s (%s) = %v, want ErrForbidden", who.id, who.role, err)
		}
	}
	d := always
	d.Approver, d.Role, d.GrantFor = "token:root", store.RoleAdmin, "team"
	if _, err := svc.Decide(ctx, d); !errors.Is(err, runner.ErrInvalid) {
		t.Errorf("grant_for team = %v, want ErrInvalid", err)
	}
	d.GrantFor = "workspace" // a scratch task has none
	if _, err := svc.Decide(ctx, d); !errors.Is(err, runner.ErrInvalid) {
		t.Errorf("grant_for workspace of a scratch task = %v, want ErrInvalid", err)
	}
	d.GrantFor = ""
	decided, err := svc.Decide(ctx, d)
	if err != nil || decided.Decision != store.AllowAlways || decided.Scope != "Bash(touch:*)" {
		t.Fatalf("allow_always = %+v, %v", decided, err)
	}
	if got := finished(t, svc, first.ID); got.State != store.StateSucceeded {
		t.Fatalf("first night = %s", got.State)
	}
	grants, err := svc.Grants(ctx, runner.GrantFilter{})
	if err != nil || len(grants) != 1 || grants[0].For != store.GrantForSchedule || grants[0].Name != "nightly" ||
		grants[0].GrantedBy != "token:root" || grants[0].Scope != "Bash(touch:*)" {
		t.Fatalf("grants = %+v, %v", grants, err)
	}

	second := nightly(t, svc, rt, "night 2", "touch b.txt")
	if got := finished(t, svc, second.ID); got.State != store.StateSucceeded {
		t.Fatalf("second night = %s (%+v)", got.State, got.Result)
	}
	if n := len(runnertest.Events(t, svc, second.ID, "approval_requested")); n != 0 {
		t.Errorf("the second night was asked %d times", n)
	}
	used := runnertest.Events(t, svc, second.ID, "grant_used")
	if len(used) != 1 || !contains(string(used[0].Payload), grants[0].ID) || !contains(string(used[0].Payload), "touch b.txt") {
		t.Errorf("grant_used events = %+v", used)
	}

	third := nightly(t, svc, rt, "night 3", "touch secret")
	finished(t, svc, third.ID)
	if r := refusals(t, svc, third.ID); len(r) != 1 || r[0]["code"] != agent.RefusedByRule {
		t.Errorf("refusals under a deny rule = %+v", r)
	}

	if _, err := svc.RevokeGrant(ctx, runner.Principal{ID: "token:bob", Role: store.RoleApprove}, grants[0].ID); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("revoke by an approver = %v, want ErrForbidden", err)
	}
	if g, err := svc.RevokeGrant(ctx, runner.Principal{ID: "token:root", Role: store.RoleAdmin}, grants[0].ID); err != nil || g.RevokedBy != "token:root" {
		t.Fatalf("revoke = %+v, %v", g, err)
	}
	fourth := nightly(t, svc, rt, "night 4", "touch c.txt")
	if ap := waitPending(t, svc, fourth.ID); ap.Tool != "bash" {
		t.Errorf("asked about %+v", ap)
	}
	if n := len(runnertest.Events(t, svc, fourth.ID, "grant_used")); n != 0 {
		t.Errorf("a revoked grant was used %d times", n)
	}
}

// TestRequireSecondApprover: with [runner] require_second_approver an
// admin may not decide its own task's calls; another approver may.
func TestRequireSecondApprover(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("mine", calls(bashCall("c1", "touch x")), answer("done"))
	set := settings(1)
	set.Runner.RequireSecondApprover = true
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "mine", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "token:root", Role: store.RoleAdmin}); !errors.Is(err, runner.ErrForbidden) {
		t.Fatalf("an admin deciding its own task under the two-person rule = %v, want ErrForbidden", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatalf("a second approver: %v", err)
	}
	if got := finished(t, svc, task.ID); got.State != store.StateSucceeded {
		t.Fatalf("state = %s", got.State)
	}
}
