package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestRunnerSupport covers what the runner service adds to the store:
// requeue, cancel flag, heartbeats, grants, the inbox and approval scopes,
// notes and one-time consumption, on both databases.
func TestRunnerSupport(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testRunnerSupport(t, open) })
	}
}

func testRunnerSupport(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	nt := newTask("support")
	nt.Approvers = []string{"slack:U2"}
	task := mustCreate(t, s, nt, "")
	if !slices.Equal(task.Approvers, []string{"slack:U2"}) {
		t.Fatalf("approvers = %v", task.Approvers)
	}

	// Requeue only from the given states, with a new job.
	if _, err := s.Requeue(ctx, task.ID, []store.State{store.StateInterrupted}); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("Requeue from queued: %v, want state conflict", err)
	}
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateInterrupted, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestCancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if c, _, err := s.ControlState(ctx, task.ID); err != nil || !c {
		t.Fatalf("cancel flag after RequestCancel = %v, %v; want set", c, err)
	}
	re, err := s.Requeue(ctx, task.ID, []store.State{store.StateInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	if re.State != store.StateQueued || re.JobID == task.JobID || !re.FinishedAt.IsZero() {
		t.Fatalf("requeued = %+v (old job %d)", re, task.JobID)
	}
	if c, _, err := s.ControlState(ctx, task.ID); err != nil || c {
		t.Fatalf("cancel flag after requeue = %v, %v; want cleared", c, err)
	}
	// The inbox flag: set by a posted message, cleared once it is taken.
	for _, step := range []struct {
		do   func() error
		want bool
	}{
		{func() error { return nil }, false},
		{func() error { _, err := s.PostMessage(ctx, task.ID, "slack:U1", "also this"); return err }, true},
		{func() error { _, err := s.TakeInbox(ctx, task.ID); return err }, false},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		if _, inbox, err := s.ControlState(ctx, task.ID); err != nil || inbox != step.want {
			t.Fatalf("inbox flag = %v, %v; want %v", inbox, err, step.want)
		}
	}
	if _, _, err := s.ControlState(ctx, "t_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ControlState unknown: %v", err)
	}
	if err := s.RequestCancel(ctx, "t_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RequestCancel unknown: %v", err)
	}

	// Heartbeats show on running tasks.
	owner := "node-1"
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &owner}); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	running, err := s.RunningTasks(ctx)
	if err != nil || len(running) != 1 || running[0].LeaseOwner != owner || running[0].HeartbeatAt.IsZero() {
		t.Fatalf("RunningTasks = %+v, %v", running, err)
	}

	// Grants are a set.
	for _, g := range []string{"Bash(go test:*)", "Edit(a.md)", "Bash(go test:*)"} {
		if err := s.AddGrant(ctx, task.ID, g); err != nil {
			t.Fatal(err)
		}
	}
	if g, err := s.Grants(ctx, task.ID); err != nil || !slices.Equal(g, []string{"Bash(go test:*)", "Edit(a.md)"}) {
		t.Fatalf("Grants = %v, %v", g, err)
	}

	// The inbox delivers each message once, in order.
	for _, text := range []string{"one", "two"} {
		if _, err := s.PostMessage(ctx, task.ID, "api:x", text); err != nil {
			t.Fatal(err)
		}
	}
	if has, _ := s.HasInbox(ctx, task.ID); !has {
		t.Fatal("HasInbox = false after posting")
	}
	got, err := s.TakeInbox(ctx, task.ID)
	if err != nil || len(got) != 2 || got[0].Text != "one" || got[1].Text != "two" {
		t.Fatalf("TakeInbox = %+v, %v", got, err)
	}
	if again, _ := s.TakeInbox(ctx, task.ID); len(again) != 0 {
		t.Fatalf("second TakeInbox = %+v", again)
	}

	// Approval scopes, note and consumption.
	na := store.NewApproval{TaskID: task.ID, Tool: "bash", CallHash: "h1", Requester: "slack:U1",
		Scopes: []string{"Bash=make", "Bash(make:*)"}, ExpiresAt: clk.Now().Add(1e9 * 60)}
	a, err := s.CreateApproval(ctx, na)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ConsumeApproval(ctx, a.ID); ok {
		t.Fatal("a pending approval was consumed")
	}
	if _, err := s.Decide(ctx, a.ID, store.DecideOpts{Decision: store.AllowTask, Approver: "slack:U3", Scope: "Bash(rm:*)"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Decide with an unoffered scope: %v", err)
	}
	d, err := s.Decide(ctx, a.ID, store.DecideOpts{Decision: store.AllowTask, Approver: "slack:U3", Note: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Scope != "Bash=make" || d.Note != "ok" || !slices.Equal(d.Scopes, na.Scopes) {
		t.Fatalf("decided = %+v", d)
	}
	if ok, err := s.ConsumeApproval(ctx, a.ID); err != nil || !ok {
		t.Fatalf("first consume = %v, %v", ok, err)
	}
	if ok, _ := s.ConsumeApproval(ctx, a.ID); ok {
		t.Fatal("an approval was consumed twice")
	}
	list, err := s.ApprovalsForCall(ctx, task.ID, "h1")
	if err != nil || len(list) != 1 || list[0].ConsumedAt.IsZero() {
		t.Fatalf("ApprovalsForCall = %+v, %v", list, err)
	}
	if all, err := s.ListApprovals(ctx, store.ApprovalAllowed, "", 0); err != nil || len(all) != 1 {
		t.Fatalf("ListApprovals(allowed) = %d, %v", len(all), err)
	}
	if pend, err := s.ListApprovals(ctx, store.ApprovalPending, "", 0); err != nil || len(pend) != 0 {
		t.Fatalf("ListApprovals(pending) = %d, %v", len(pend), err)
	}
	counts, err := s.CountTasks(ctx)
	if err != nil || len(counts) != 1 || counts[0].N != 1 || counts[0].State != store.StateRunning {
		t.Fatalf("CountTasks = %+v, %v", counts, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRecentDecisions: decided and expired approvals come latest decision
// first, capped; pending ones never; on both databases.
func TestRecentDecisions(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			s := open(t, store.Config{Now: clk.Now})
			task := mustCreate(t, s, newTask("decisions"), "")
			var ids []string
			for i := range 4 {
				a, err := s.CreateApproval(ctx, store.NewApproval{TaskID: task.ID, Tool: "bash", CallHash: fmt.Sprint("h", i),
					Requester: "slack:U1", ExpiresAt: clk.Now().Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, a.ID)
			}
			// Decided in another order than created: 2, then 0; 1 expires
			// last; 3 stays pending.
			for _, i := range []int{2, 0} {
				clk.Advance(time.Minute)
				if _, err := s.Decide(ctx, ids[i], store.DecideOpts{Decision: store.Deny, Approver: "slack:U3"}); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(time.Minute)
			if _, err := s.Decide(ctx, ids[1], store.DecideOpts{Decision: store.AllowOnce, Approver: "slack:U3"}); err != nil {
				t.Fatal(err)
			}
			got := func(limit int) []string {
				t.Helper()
				list, err := s.RecentDecisions(ctx, limit)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, a := range list {
					out = append(out, a.ID)
				}
				return out
			}
			if all := got(0); !slices.Equal(all, []string{ids[1], ids[0], ids[2]}) {
				t.Fatalf("RecentDecisions = %v, want %v", all, []string{ids[1], ids[0], ids[2]})
			}
			if two := got(2); !slices.Equal(two, []string{ids[1], ids[0]}) {
				t.Fatalf("RecentDecisions(2) = %v", two)
			}
			clk.Advance(2 * time.Hour)
			if _, err := s.ExpireApprovals(ctx, clk.Now()); err != nil {
				t.Fatal(err)
			}
			if first := got(1); !slices.Equal(first, []string{ids[3]}) {
				t.Fatalf("after expiry, RecentDecisions(1) = %v, want the expired %s", first, ids[3])
			}
		})
	}
}
