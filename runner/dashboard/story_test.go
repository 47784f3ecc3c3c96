package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestTaskPageTellsTheStory: the task page opens with the outcome in its
// colour, the reason in a sentence, who asked from where, the time split
// into running and waiting for a person; then what the agent did in
// plain words, each call one line with its outcome and its detail on
// demand; the raw events are one tab away, not on the page.
func TestTaskPageTellsTheStory(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, ap := e.parked("token:alice", "tidy the notes")
	b := e.browser()
	b.signIn(e.token("bob", store.RoleApprove))

	waiting := b.get("/tasks/" + taskID).Body
	for _, want := range []string{`<header class="outcome o-warn">`, "Waiting for approval", "token:alice from the API",
		"asked for approval to run echo hi &gt; f", `value="allow_once"`} {
		if !strings.Contains(waiting, want) {
			t.Errorf("the waiting task's page lacks %q", want)
		}
	}
	if _, err := e.svc.Decide(t.Context(), runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, e.svc, taskID, 0, store.StateSucceeded)
	done := b.get("/tasks/" + taskID).Body
	for _, want := range []string{`<header class="outcome o-ok">`, "Succeeded", "allowed once by token:bob",
		`data-i="✓" id="c--c1"><details><summary><span class="what">ran echo hi &gt; f</span></summary>`, "exit code: 0",
		`<li class="say">done</li>`, `<h3>Step 1</h3>`, `<h3>Step 2</h3>`} {
		if !strings.Contains(done, want) {
			t.Errorf("the finished task's page lacks %q", want)
		}
	}
	// The time is split and labelled: it ran, and it waited for bob.
	m := regexp.MustCompile(`<dd data-durations>([^<]*)</dd>`).FindStringSubmatch(done)
	if m == nil || !strings.Contains(m[1], "ran ") || !strings.Contains(m[1], "for approval") {
		t.Errorf("durations = %q, want the running and the waiting time", m)
	}
	for _, raw := range []string{"task_state", "run_finished", "state →", `class="ev `} {
		if strings.Contains(done, raw) {
			t.Errorf("the story shows the raw log's %q", raw)
		}
	}
	if ev := b.get("/tasks/" + taskID + "?tab=events").Body; !strings.Contains(ev, "state → succeeded") || !strings.Contains(ev, `class="ev `) {
		t.Error("the raw events tab does not list the log")
	}
}

// TestBlockedTaskAsksFromItsPage: a goal blocked on a question shows it in
// the header, in the warning colour (not a success's green), with an
// answer box for the requester, which sends the answer as a message.
func TestBlockedTaskAsksFromItsPage(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}, agenttest.Turn{Text: "thanks"}))
	alice := e.token("alice", store.RoleApprove)
	task, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "ship it"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, e.svc, task.ID, 0, store.StateSucceeded)
	q, _ := json.Marshal(map[string]string{"goal_id": "g1", "question": "Which branch should <b>ship</b>?"})
	if _, err := e.st.AppendEvent(t.Context(), task.ID, "question", q); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.SetTaskState(t.Context(), task.ID, []store.State{store.StateSucceeded}, store.StateBlocked,
		&store.StateOpts{Result: &store.Result{Reason: "the goal asks the requester a question"}}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(alice)
	p := b.get("/tasks/" + task.ID).Body
	for _, want := range []string{`<header class="outcome o-warn">`, "Blocked: it needs you", "the goal asks the requester a question",
		"Which branch should &lt;b&gt;ship&lt;/b&gt;?", `<textarea id="answer" name="text"`} {
		if !strings.Contains(p, want) {
			t.Errorf("the blocked task's page lacks %q", want)
		}
	}
	if strings.Contains(p, "o-ok") {
		t.Error("a blocked task is shown in the success colour")
	}
	// She answers from the page: the answer goes to the task as her
	// message, and the question is settled.
	if res := b.post("/tasks/"+task.ID+"/message", url.Values{"csrf": {b.csrf()}, "text": {"the release branch"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answering = %d:\n%s", res.StatusCode, res.Body)
	}
	runnertest.WaitState(t, e.svc, task.ID, 0, store.StateSucceeded)
	p = b.get("/tasks/" + task.ID).Body
	if !strings.Contains(p, "token:alice wrote") || !strings.Contains(p, "the release branch") || strings.Contains(p, `id="question"`) {
		t.Errorf("after the answer the page does not show it, or still asks:\n%s", p)
	}
}

// TestStoryTellsABudgetCard: a budget card in the log reads as the task
// asking for more budget, and its "Stop and publish" as such.
func TestStoryTellsABudgetCard(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}))
	task, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "spend"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, e.svc, task.ID, 0, store.StateSucceeded)
	for _, ev := range []struct {
		typ string
		p   map[string]any
	}{
		{"approval_requested", map[string]any{"approval_id": "a_1", "tool": "budget", "subject": "cost_budget", "kind": "budget"}},
		{"approval_decided", map[string]any{"approval_id": "a_1", "decision": "stop_publish", "approver": "token:bob"}},
	} {
		raw, _ := json.Marshal(ev.p)
		if _, err := e.st.AppendEvent(t.Context(), task.ID, ev.typ, raw); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("bob", store.RoleApprove))
	page := b.get("/tasks/" + task.ID).Body
	for _, want := range []string{"spent its budget and asks for more", "stopped, publishing what exists by token:bob"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
