package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/workspace"
)

// firstUser is the first user message of the i-th request p got.
func firstUser(t *testing.T, p *agenttest.ScriptedProvider, i int) (system, user string) {
	t.Helper()
	reqs := p.Requests()
	if len(reqs) <= i {
		t.Fatalf("the model got %d requests, want more than %d", len(reqs), i)
	}
	for _, m := range reqs[i].Messages {
		switch {
		case m.Role == agent.RoleSystem && system == "":
			system = m.Content
		case m.Role == agent.RoleUser && user == "":
			user = m.Content
		}
	}
	return system, user
}

var admin = runner.Principal{ID: "token:root", Role: store.RoleAdmin}

func submit(t *testing.T, svc *runner.Service, req runner.TaskRequest) store.Task {
	t.Helper()
	task, _, err := svc.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return finished(t, svc, task.ID)
}

// TestMemoryRememberedThenRecalled: what a task remembers for its
// requester is recalled after the prompt of that requester's next task
// (the system prompt, the cached prefix, stays the same bytes), not in
// another requester's; a text holding a secret the service knows is
// refused and nothing is stored.
func TestMemoryRememberedThenRecalled(t *testing.T) {
	ctx := context.Background()
	const secret = "sk-live-memory-0123456789"
	p := agenttest.NewScriptedProvider(
		calls(call("c1", "remember", map[string]string{"text": "The staging database is reset nightly at 02:00 UTC.", "scope": "user"})),
		answer("noted"),
		answer("at 02:00"),
		answer("no idea"),
		calls(call("c2", "remember", map[string]string{"text": "the deploy key is " + secret})),
		answer("refused"),
	)
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1), Configure: func(c *runner.Config) { c.Secrets = []string{secret} }})
	alice := runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Posture: "auto"}

	req := alice
	req.Prompt = "remember when staging resets"
	// A user fact needs a person's approval (TestMemoryUserScopeWriteNeedsAPerson).
	first, _, err := svc.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, first.ID)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", CallHash: ap.CallHash,
		Approver: "token:ops", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	if got := finished(t, svc, first.ID); got.State != store.StateSucceeded {
		t.Fatalf("remembering task = %s", got.State)
	}
	if res := toolResult(p, "c1"); !strings.Contains(res, "Remembered as mem_") {
		t.Fatalf("remember result = %q", res)
	}
	sys1, _ := firstUser(t, p, 0)

	req.Prompt = "When is the staging database reset?"
	submit(t, svc, req)
	sys2, user := firstUser(t, p, 2)
	if !strings.HasPrefix(user, req.Prompt+"\n\n<recalled-memory") || !strings.Contains(user, "The staging database is reset nightly at 02:00 UTC.") {
		t.Errorf("the next task's prompt = %q, want the fact recalled after it", user)
	}
	if sys1 != sys2 {
		t.Errorf("the system prompt changed between tasks:\n%q\n%q", sys1, sys2)
	}

	bob := req
	bob.Requester = "api:bob"
	submit(t, svc, bob)
	if _, user := firstUser(t, p, 3); user != bob.Prompt {
		t.Errorf("another requester's prompt = %q, want no recall", user)
	}

	req.Prompt = "keep the key"
	submit(t, svc, req)
	if res := toolResult(p, "c2"); !strings.Contains(res, "holds a secret") || strings.Contains(res, secret) {
		t.Errorf("remembering a secret = %q", res)
	}
	mems, err := svc.Memories(ctx, admin, runner.MemoryFilter{All: true})
	if err != nil || len(mems) != 1 || strings.Contains(mems[0].Text, secret) || mems[0].By != "api:alice" || mems[0].TaskID == "" {
		t.Errorf("stored memories = %+v, %v", mems, err)
	}
}

// TestMemoryWritesNeedAPerson: under auto, a task a webhook started (with
// a chat thread, so someone can be asked) asks a person before it remembers (and remembers once allowed), and under
// yolo a task still asks before it forgets (and forgets nothing when
// declined). The requests carry the text, so the person sees what would be
// kept.
func TestMemoryWritesNeedAPerson(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("webhook says remember", calls(call("c1", "remember", map[string]string{"text": "CI runs on the arm64 pool", "scope": "user"})), answer("done"))
	rt.script("forget it", calls(call("c2", "forget", map[string]string{"id": "mem_x"})), answer("done"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1)})
	decide := func(ap store.Approval, choice string) {
		t.Helper()
		if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: choice, CallHash: ap.CallHash,
			Approver: "token:ops", Role: store.RoleApprove}); err != nil {
			t.Fatal(err)
		}
	}

	hook, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceWebhook, Requester: "webhook:ci", Prompt: "webhook says remember", Posture: "auto",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1"}}})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, hook.ID)
	if ap.Tool != "remember" || !strings.Contains(ap.Preview, "arm64 pool") {
		t.Fatalf("asked about %+v", ap)
	}
	if mems, _ := svc.Memories(ctx, admin, runner.MemoryFilter{}); len(mems) != 0 {
		t.Fatalf("remembered before a person allowed it: %+v", mems)
	}
	decide(ap, "allow_once")
	if got := finished(t, svc, hook.ID); got.State != store.StateSucceeded {
		t.Fatalf("webhook task = %s", got.State)
	}
	mems, _ := svc.Memories(ctx, admin, runner.MemoryFilter{})
	if len(mems) != 1 || mems[0].By != "webhook:ci" || mems[0].Text != "CI runs on the arm64 pool" {
		t.Fatalf("memories = %+v", mems)
	}

	api, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "forget it", Posture: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	ap = waitPending(t, svc, api.ID)
	if ap.Tool != "forget" {
		t.Fatalf("asked about %+v", ap)
	}
	decide(ap, "deny")
	finished(t, svc, api.ID)
	if r := refusals(t, svc, api.ID); len(r) != 1 || r[0]["code"] != agent.RefusedByPerson {
		t.Errorf("declined forget refusals = %+v", r)
	}
}

// TestMemoryAuthority: a user memory is its principal's (and admins') to
// see and forget; a workspace memory every submitter sees, and who saved
// it, an approver or an admin may forget; one a principal may not see is
// not found, as if it did not exist.
func TestMemoryAuthority(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Store: st})
	alice := runner.Principal{ID: "token:alice", Role: store.RoleSubmit}
	bob := runner.Principal{ID: "token:bob", Role: store.RoleSubmit}
	ops := runner.Principal{ID: "token:ops", Role: store.RoleApprove}
	mine, _, err := st.AddMemory(ctx, store.NewMemory{Scope: store.MemoryScope{Kind: store.MemoryUser, Name: alice.ID}, Text: "alice likes tabs", By: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	team, _, err := st.AddMemory(ctx, store.NewMemory{Scope: store.MemoryScope{Kind: store.MemoryWorkspace, Name: "repo"}, Text: "make check", By: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Memories(ctx, bob, runner.MemoryFilter{}); len(got) != 1 || got[0].ID != team.ID {
		t.Errorf("bob sees %+v, want only the workspace memory", got)
	}
	if got, _ := svc.Memories(ctx, alice, runner.MemoryFilter{}); len(got) != 2 {
		t.Errorf("alice sees %+v, want both", got)
	}
	if got, _ := svc.Memories(ctx, alice, runner.MemoryFilter{Scope: "workspace:repo"}); len(got) != 1 || got[0].ID != team.ID {
		t.Errorf("alice's workspace:repo = %+v", got)
	}
	if _, err := svc.Memories(ctx, alice, runner.MemoryFilter{Scope: "team:x"}); !errors.Is(err, runner.ErrInvalid) {
		t.Errorf("a bad scope = %v, want ErrInvalid", err)
	}
	if _, err := svc.Memory(ctx, bob, mine.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("bob reads alice's memory: %v, want ErrNotFound", err)
	}
	if _, err := svc.ForgetMemory(ctx, bob, mine.ID); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("bob forgets alice's memory: %v, want ErrNotFound", err)
	}
	if _, err := svc.ForgetMemory(ctx, bob, team.ID); !errors.Is(err, runner.ErrForbidden) {
		t.Errorf("bob forgets the workspace's memory: %v, want ErrForbidden", err)
	}
	if m, err := svc.ForgetMemory(ctx, ops, team.ID); err != nil || m.Live() || m.ForgottenBy != ops.ID {
		t.Errorf("an approver forgets the workspace's memory: %+v, %v", m, err)
	}
	if m, err := svc.ForgetMemory(ctx, alice, mine.ID); err != nil || m.Live() {
		t.Errorf("alice forgets her own: %+v, %v", m, err)
	}
	if got, _ := svc.Memories(ctx, alice, runner.MemoryFilter{}); len(got) != 0 {
		t.Errorf("forgotten memories are listed: %+v", got)
	}
	if got, _ := svc.Memories(ctx, admin, runner.MemoryFilter{All: true}); len(got) != 2 {
		t.Errorf("All for an admin = %+v", got)
	}
}

// TestMemoryUserScopeWriteNeedsAPerson: under yolo an API task saves a
// workspace fact on its own, but a fact for its requester (user scope)
// waits for a person, as the seed's global facts do, and is saved once
// allowed.
func TestMemoryUserScopeWriteNeedsAPerson(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	rt.script("remember both",
		calls(call("c1", "remember", map[string]string{"text": "the build needs go 1.25"})),
		calls(call("c2", "remember", map[string]string{"text": "alice reviews in the morning", "scope": "user"})),
		answer("done"))
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := settings(1)
	set.Workspaces = []config.Workspace{{Name: "w", Repo: commandRepo(t, map[string]string{"README.md": "hi"}), Base: "main"}}
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "remember both", Posture: "yolo", Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	ap := waitPending(t, svc, task.ID)
	if ap.Tool != "remember" || !strings.Contains(ap.Preview, "alice reviews") {
		t.Fatalf("asked about %+v", ap)
	}
	if mems, _ := svc.Memories(ctx, admin, runner.MemoryFilter{}); len(mems) != 1 || mems[0].Text != "the build needs go 1.25" || mems[0].Scope.Kind != store.MemoryWorkspace {
		t.Fatalf("before the decision: memories = %+v", mems)
	}
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", CallHash: ap.CallHash,
		Approver: "token:ops", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	if got := finished(t, svc, task.ID); got.State != store.StateSucceeded {
		t.Fatalf("task = %s", got.State)
	}
	if mems, _ := svc.Memories(ctx, admin, runner.MemoryFilter{}); len(mems) != 2 {
		t.Fatalf("after allowing: memories = %+v", mems)
	}
}
