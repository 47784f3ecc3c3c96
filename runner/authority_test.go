package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestMessageNeedsControl: only the requester or an admin messages a
// task. Anyone else is refused with ErrForbidden, and a finished task
// stays finished: nothing is queued, the model is not asked again.
func TestMessageNeedsControl(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	p := rt.script("tidy up", answer("tidied"), answer("tidied again"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1)})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "tidy up", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	asked := len(p.Requests())
	for _, who := range []runner.Principal{
		{ID: "slack:T1/UMAL", Role: store.RoleSubmit},
		{ID: "token:bob", Role: store.RoleApprove},
		{},
	} {
		if _, err := svc.Message(ctx, task.ID, who, "run rm -rf ~"); !errors.Is(err, runner.ErrForbidden) {
			t.Errorf("%q messaging root's task: %v, want ErrForbidden", who.ID, err)
		}
	}
	if got, _ := svc.Task(ctx, task.ID); got.State != store.StateSucceeded || len(p.Requests()) != asked {
		t.Fatalf("after refused messages: state %s, model asked %d times (was %d)", got.State, len(p.Requests()), asked)
	}
	for _, e := range runnertest.Events(t, svc, task.ID, "message") {
		if strings.Contains(string(e.Payload), "rm -rf") {
			t.Errorf("a refused message was recorded: %s", e.Payload)
		}
	}
	// The requester continues it.
	if _, err := svc.Message(ctx, task.ID, runner.Principal{ID: "token:root", Role: store.RoleSubmit}, "once more"); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	if len(p.Requests()) != asked+1 {
		t.Errorf("the requester's message did not continue the task")
	}
}

// TestInstructorMayNotApprove: an admin who steers someone else's task
// may not approve the call their message produced, whatever their role;
// another approver may. The approval records who instructed it.
func TestInstructorMayNotApprove(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("look around", answer("nothing to do"), calls(bashCall("c1", "echo cleaned > c.txt")), answer("cleaned"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1)})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "look around", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	root := runner.Principal{ID: "token:root", Role: store.RoleAdmin}
	if _, err := svc.Message(ctx, task.ID, root, "run the cleanup"); err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if len(ap.Instructors) != 1 || ap.Instructors[0] != root.ID {
		t.Fatalf("instructors = %v", ap.Instructors)
	}
	if err := svc.MayDecide(ctx, root, ap); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("MayDecide(instructor) = %v", err)
	}
	_, err = svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: root.ID, Role: root.Role})
	var re *runner.Error
	if !errors.As(err, &re) || !errors.Is(err, runner.ErrForbidden) || !strings.Contains(re.Message, "sent this task a message") {
		t.Fatalf("the instructor's decision: %v, want ErrForbidden", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	if got := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateBlocked, store.StateFailed); got.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", got.State, got.Result)
	}
}

// TestChatApproverScope: a chat approver decides approvals of tasks
// relayed on its own platform where that platform is allowed; a global
// approver and a token with the approve role decide anywhere.
func TestChatApproverScope(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("in slack", calls(bashCall("c1", "echo a > a.txt")), answer("a"))
	rt.script("from the api", calls(bashCall("c1", "echo b > b.txt")), answer("b"))
	set := settings(2)
	set.Bot.Slack.Approvers, set.Bot.Slack.AllowChannels = []string{"UBOB"}, []string{"C1"}
	set.Bot.Telegram.Approvers, set.Bot.Telegram.AllowChats = []string{"222"}, []string{"-100"}
	set.Bot.GlobalApprovers = []string{"telegram:333"}
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	inSlack, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceSlack, Requester: "slack:T1/UALICE", Prompt: "in slack",
		Posture: "ask", Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	fromAPI, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "from the api", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	slackAp, apiAp := waitPending(t, svc, inSlack.ID), waitPending(t, svc, fromAPI.ID)

	principal := func(id string) runner.Principal {
		t.Helper()
		p, err := svc.ChatPrincipal(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		who  runner.Principal
		ap   store.Approval
		may  bool
		what string
	}{
		{principal("slack:T1/UBOB"), slackAp, true, "a Slack approver, a task of its channel"},
		{principal("telegram:222"), slackAp, false, "a Telegram approver, a Slack task"},
		{principal("slack:T1/UBOB"), apiAp, false, "a Slack approver, an API task relayed nowhere"},
		{principal("telegram:333"), apiAp, true, "a global approver, an API task"},
		{principal("slack:T1/UMAL"), slackAp, false, "a Slack user who is no approver"},
		{runner.Principal{ID: "token:carol", Role: store.RoleApprove}, apiAp, true, "an approve token"},
	} {
		err := svc.MayDecide(ctx, c.who, c.ap)
		if (err == nil) != c.may {
			t.Errorf("%s: MayDecide = %v, want allowed %v", c.what, err, c.may)
		}
		if err != nil && !errors.Is(err, runner.ErrForbidden) {
			t.Errorf("%s: %v is not ErrForbidden", c.what, err)
		}
	}
	// Decide applies the same rule, the role coming from the service.
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: slackAp.ID, Decision: "allow_once", Approver: "telegram:222"}); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("a Telegram approver deciding a Slack task: %v", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: apiAp.ID, Decision: "allow_once", Approver: "token:nobody"}); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("an id without a role deciding: %v", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: apiAp.ID, Decision: "allow_once", Approver: "telegram:333"}); err != nil {
		t.Errorf("the global approver: %v", err)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: slackAp.ID, Decision: "allow_once", Approver: "slack:T1/UBOB"}); err != nil {
		t.Errorf("the channel's approver: %v", err)
	}
}
