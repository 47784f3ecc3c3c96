package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"reasonix/runner/store"
)

// actionForm finds the task page's form posting to action and says whether
// it is rendered hidden.
func actionForm(t *testing.T, body, action string) (hidden bool) {
	t.Helper()
	m := regexp.MustCompile(`<form method="post" action="/tasks/[^/"]+/` + action + `"([^>]*)>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the task page has no %s form:\n%s", action, body)
	}
	return strings.Contains(m[1], " hidden")
}

// TestTaskActionsFollowState: the page offers Cancel while the task is live
// and Resume once it ended (both forms are there, the other hidden, for the
// page's script to switch as the state streams in); the server refuses
// the action the state does not allow, whatever the page shows.
func TestTaskActionsFollowState(t *testing.T) {
	e := newEnv(t, bashThenDone())
	b := e.browser()
	b.signIn(e.token("alice", store.RoleApprove))
	taskID, _ := e.parked("token:alice", "wait for me")

	p := b.get("/tasks/" + taskID)
	if actionForm(t, p.Body, "cancel") || !actionForm(t, p.Body, "resume") {
		t.Errorf("a waiting task's page: cancel hidden %v, resume hidden %v; want Cancel shown, Resume hidden",
			actionForm(t, p.Body, "cancel"), actionForm(t, p.Body, "resume"))
	}
	if p := b.post("/tasks/"+taskID+"/resume", url.Values{"csrf": {b.csrf()}}); p.StatusCode != http.StatusConflict {
		t.Errorf("resuming a waiting task = %d, want 409:\n%s", p.StatusCode, p.Body)
	}
	if p := b.post("/tasks/"+taskID+"/cancel", url.Values{"csrf": {b.csrf()}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel = %d:\n%s", p.StatusCode, p.Body)
	}
	if task, _ := e.svc.Task(t.Context(), taskID); task.State != store.StateCancelled {
		t.Fatalf("after cancel the task is %s", task.State)
	}

	p = b.get("/tasks/" + taskID)
	if !actionForm(t, p.Body, "cancel") || actionForm(t, p.Body, "resume") {
		t.Errorf("a cancelled task's page: cancel hidden %v, resume hidden %v; want Cancel hidden, Resume shown",
			actionForm(t, p.Body, "cancel"), actionForm(t, p.Body, "resume"))
	}
	if p := b.post("/tasks/"+taskID+"/cancel", url.Values{"csrf": {b.csrf()}}); p.StatusCode != http.StatusConflict {
		t.Errorf("cancelling a cancelled task = %d, want 409:\n%s", p.StatusCode, p.Body)
	}
	if task, _ := e.svc.Task(t.Context(), taskID); task.State != store.StateCancelled {
		t.Errorf("after the refused actions the task is %s", task.State)
	}
}
