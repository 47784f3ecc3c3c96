package runner_test

import (
	"context"
	"errors"
	"testing"

	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestDecideByRole: a submit principal cannot decide; an approve principal
// cannot decide its own task's calls (unless AllowSelfApproval); an admin
// can, since it could mint another approver anyway.
func TestDecideByRole(t *testing.T) {
	for _, tc := range []struct {
		name      string
		approver  string
		role      store.Role
		allowSelf bool
		want      error
	}{
		{"submit", "token:ci", store.RoleSubmit, false, runner.ErrForbidden},
		{"submit even with self-approval", "token:alice", store.RoleSubmit, true, runner.ErrForbidden},
		{"approve, own task", "token:alice", store.RoleApprove, false, runner.ErrForbidden},
		{"approve, own task, self-approval allowed", "token:alice", store.RoleApprove, true, nil},
		{"approve, someone else", "token:bob", store.RoleApprove, false, nil},
		{"admin, own task", "token:alice", store.RoleAdmin, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rt := newRouter()
			rt.script("make out.txt", calls(bashCall("c1", "echo x > out.txt")), answer("done"))
			svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1),
				Configure: func(c *runner.Config) { c.AllowSelfApproval = tc.allowSelf }})
			task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "make out.txt", Posture: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			ap := waitPending(t, svc, task.ID)
			_, err = svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: tc.approver, Role: tc.role})
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Decide = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSubmitAboveMaxPosture: the limit applies to the posture the task
// would run under, the configured default included.
func TestSubmitAboveMaxPosture(t *testing.T) {
	set := settings(1)
	set.Permissions.Posture = "yolo"
	svc := runnertest.Start(t, runnertest.Options{Settings: set})
	_, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:ci", Prompt: "x", MaxPosture: "auto"})
	var re *runner.Error
	if !errors.As(err, &re) || !errors.Is(err, runner.ErrForbidden) || re.Message == "" {
		t.Fatalf("a default yolo task under an auto limit: %v", err)
	}
	if _, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:ci", Prompt: "x", Posture: "ask", MaxPosture: "auto"}); err != nil {
		t.Fatalf("ask under an auto limit: %v", err)
	}
}
