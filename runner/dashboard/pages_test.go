package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestApprovalAuthorization: the page lets a principal decide exactly what
// the API would: a submit token cannot, the task's requester cannot decide
// its own call, another approver can, and the task then continues.
func TestApprovalAuthorization(t *testing.T) {
	e := newEnv(t, bashThenDone())
	alice := e.token("alice", store.RoleApprove)
	taskID, ap := e.parked("token:alice", "needs approval")

	ci := e.browser()
	ci.signIn(e.token("ci", store.RoleSubmit))
	if p := ci.get("/approvals"); !strings.Contains(p.Body, "not decide approvals") || strings.Contains(p.Body, `value="allow_once"`) {
		t.Errorf("a submit principal's approvals page offers a decision:\n%s", p.Body)
	}
	form := url.Values{"csrf": {ci.csrf()}, "decision": {"allow_once"}, "call_hash": {ap.CallHash}}
	if p := ci.post("/approvals/"+ap.ID, form); p.StatusCode != http.StatusForbidden || !strings.Contains(p.Body, "role submit") {
		t.Errorf("a submit principal deciding = %d:\n%s", p.StatusCode, p.Body)
	}
	if p := ci.post("/tasks/"+taskID+"/cancel", url.Values{"csrf": {ci.csrf()}}); p.StatusCode != http.StatusForbidden {
		t.Errorf("a submit principal cancelling alice's task = %d", p.StatusCode)
	}

	own := e.browser()
	own.signIn(alice)
	// She is told in her own words why, not the rule's third person.
	if p := own.get("/tasks/" + taskID); !strings.Contains(p.Body, "You cannot decide this: you asked for this task; another approver must decide.") ||
		strings.Contains(p.Body, "token:alice requested this task") {
		t.Errorf("the requester's task page offers the decision, or refuses her as a stranger:\n%s", p.Body)
	}
	form.Set("csrf", own.csrf())
	if p := own.post("/approvals/"+ap.ID, form); p.StatusCode != http.StatusForbidden ||
		!strings.Contains(p.Body, "You asked for this task; another approver must decide. Nothing changed.") {
		t.Errorf("the requester deciding = %d:\n%s", p.StatusCode, p.Body)
	}
	if a, _ := e.st.Approval(t.Context(), ap.ID); a.State != store.ApprovalPending {
		t.Fatalf("after refused decisions the approval is %s", a.State)
	}

	bob := e.browser()
	bob.signIn(e.token("bob", store.RoleApprove))
	form.Set("csrf", bob.csrf())
	form.Set("call_hash", "not-the-call")
	if p := bob.post("/approvals/"+ap.ID, form); p.StatusCode != http.StatusConflict {
		t.Errorf("a decision bound to another call = %d:\n%s", p.StatusCode, p.Body)
	}
	form.Set("call_hash", ap.CallHash)
	form.Set("back", "task")
	if p := bob.post("/approvals/"+ap.ID, form); p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/tasks/"+taskID {
		t.Fatalf("bob deciding = %d %q:\n%s", p.StatusCode, p.Header.Get("Location"), p.Body)
	}
	a, _ := e.st.Approval(t.Context(), ap.ID)
	if a.State != store.ApprovalAllowed || a.DecidedBy != "token:bob" {
		t.Fatalf("approval after bob = %s by %q", a.State, a.DecidedBy)
	}
	runnertest.WaitState(t, e.svc, taskID, 0, store.StateSucceeded)
	if p := bob.get("/tasks/" + taskID); !strings.Contains(p.Body, "allowed once by token:bob") || !strings.Contains(p.Body, `<header class="outcome o-ok">`) {
		t.Errorf("the task page after the decision:\n%s", p.Body)
	}

	// The requester continues her finished task from the page; bob may not.
	if p := bob.post("/tasks/"+taskID+"/message", url.Values{"csrf": {bob.csrf()}, "text": {"and more"}}); p.StatusCode != http.StatusForbidden {
		t.Errorf("bob messaging alice's task = %d", p.StatusCode)
	}
	if p := own.post("/tasks/"+taskID+"/message", url.Values{"csrf": {own.csrf()}, "text": {"now <b>tidy</b> up"}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice continuing her task = %d:\n%s", p.StatusCode, p.Body)
	}
	if p := own.get("/tasks/" + taskID); !strings.Contains(p.Body, "token:alice wrote") || !strings.Contains(p.Body, "now &lt;b&gt;tidy&lt;/b&gt; up") {
		t.Errorf("the task page does not show alice's message:\n%s", p.Body)
	}
}

// TestPagesEscapeAndFilter: hostile prompt text renders as text on the list
// and the task page; filters and search narrow the list.
func TestPagesEscapeAndFilter(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	hostile := `<script>alert("x")</script><img src=x onerror=alert(1)>`
	var ids []string
	for _, req := range []runner.TaskRequest{
		{Source: store.SourceAPI, Requester: "token:alice", Prompt: hostile},
		{Source: store.SourceCLI, Requester: "token:bob", Prompt: "upgrade the lockfile"},
	} {
		task, _, err := e.svc.Submit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	for _, path := range []string{"/", "/tasks/" + ids[0]} {
		p := b.get(path)
		if p.StatusCode != 200 || strings.Contains(p.Body, "<script>alert") || strings.Contains(p.Body, "<img src=x") ||
			!strings.Contains(p.Body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
			t.Errorf("%s (%d) does not show the prompt escaped:\n%s", path, p.StatusCode, p.Body)
		}
	}
	list := func(q string) string { return b.get("/?" + q).Body }
	if body := list("q=LOCKFILE"); !strings.Contains(body, ids[1]) || strings.Contains(body, ids[0]) {
		t.Errorf("search lockfile:\n%s", body)
	}
	if body := list("source=api"); !strings.Contains(body, ids[0]) || strings.Contains(body, ids[1]) {
		t.Error("source=api shows the cli task or hides the api task")
	}
	if body := list("requester=token:bob"); !strings.Contains(body, ids[1]) || strings.Contains(body, ids[0]) {
		t.Error("requester filter")
	}
	if body := list("state=succeeded"); strings.Contains(body, ids[0]) || !strings.Contains(body, "No tasks match") {
		t.Error("state=succeeded shows a task that did not succeed")
	}
	if p := b.get("/tasks/t_nope"); p.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown task = %d", p.StatusCode)
	}
}

// TestPagination: the list pages by cursor, newest first, with no task
// shown twice or skipped; the way back to the first page keeps the search.
func TestPagination(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 120 {
		if _, _, err := e.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:x",
			Prompt: fmt.Sprintf("task number %03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	seen, path := map[string]bool{}, "/?q=task+number"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("the pager does not end")
		}
		body := b.get(path).Body
		if pages > 0 && !strings.Contains(body, `<a href="/?q=task&#43;number" rel="first">Newest</a>`) {
			t.Errorf("page %d: the Newest link does not keep the search: %s", pages+1, body[strings.Index(body, `<nav class="pager"`):])
		}
		for i := range 120 {
			if strings.Contains(body, fmt.Sprintf("task number %03d<", i)) {
				if seen[fmt.Sprint(i)] {
					t.Fatalf("task %d on two pages", i)
				}
				seen[fmt.Sprint(i)] = true
			}
		}
		path = ""
		if i := strings.Index(body, `rel="next"`); i >= 0 {
			start := strings.LastIndex(body[:i], `href="`) + len(`href="`)
			path = html.UnescapeString(body[start : strings.Index(body[start:], `"`)+start])
		}
	}
	if len(seen) != 120 {
		t.Fatalf("saw %d of 120 tasks", len(seen))
	}
}

// TestLiveStream: a task page's stream sends each new step rendered and
// escaped, and the new state.
func TestLiveStream(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, ap := e.parked("token:alice", "stream me")
	b := e.browser()
	b.signIn(e.token("bob", store.RoleApprove))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/tasks/"+taskID+"/live?after=0", nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("live = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if _, err := e.svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "token:bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var sawDecision, sawDone bool
	for sc.Scan() && !sawDone {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		sawDecision = sawDecision || strings.Contains(line, "allowed once by token:bob")
		sawDone = strings.Contains(line, `"state":"succeeded"`)
	}
	if !sawDecision || !sawDone {
		t.Fatalf("stream ended (err %v) without the decision (%v) or the final state (%v)", sc.Err(), sawDecision, sawDone)
	}
	if anon := e.browser().get("/tasks/" + taskID + "/live"); anon.StatusCode != http.StatusUnauthorized {
		t.Errorf("live without a session = %d", anon.StatusCode)
	}
}

// TestTaskPageWeight: a task with 2,000 steps shows the first 500 and a
// link on, in a page under 150 KB.
func TestTaskPageWeight(t *testing.T) {
	e := newEnv(t, nil)
	task, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "long"})
	if err != nil {
		t.Fatal(err)
	}
	// Calls as a run makes them, each started then finished, a step each:
	// the story's heaviest shape.
	for i := range 2000 {
		typ, raw := "tool_finished", fmt.Appendf(nil, `{"tool":"bash","step":%d,"call_id":"c%d","result":"line %d of output"}`, i/2, i/2, i)
		if i%2 == 0 {
			typ, raw = "tool_started", fmt.Appendf(nil, `{"tool":"bash","step":%d,"call_id":"c%d","args":"{\"command\":\"go test ./...\"}"}`, i/2, i/2)
		}
		if _, err := e.st.AppendEvent(t.Context(), task.ID, typ, raw); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	for _, path := range []string{"/tasks/" + task.ID, "/tasks/" + task.ID + "?tab=events"} {
		p := b.get(path)
		if p.StatusCode != 200 || len(p.Body) > 150<<10 || !strings.Contains(p.Body, "Later steps") {
			t.Fatalf("%s: %d, %d bytes, later-steps link %v", path, p.StatusCode, len(p.Body), strings.Contains(p.Body, "Later steps"))
		}
		// The raw log shows each of the page's 500 events less the task's
		// first state changes; the story one line per call, both of its
		// events in one.
		n := strings.Count(p.Body, `class="ev `) + 2*strings.Count(p.Body, `<li class="it call`)
		if n > 500 || n < 490 {
			t.Errorf("%s: %d steps on the first page, want 500 less the state changes", path, n)
		}
	}
}

// TestLiveStreamEndsWithTheSession: an open live stream stops once its
// session is signed out (from another tab) or its token revoked, within
// a keep-alive, rather than go on showing the task until the tab closes.
func TestLiveStreamEndsWithTheSession(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, _ := e.parked("token:alice", "stream me")
	for _, end := range []string{"sign-out", "revoke"} {
		t.Run(end, func(t *testing.T) {
			b := e.browser()
			name := "bob-" + end
			b.signIn(e.token(name, store.RoleApprove))
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/tasks/"+taskID+"/live?after=0", nil)
			res, err := b.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("live = %d", res.StatusCode)
			}
			ended := make(chan error, 1)
			go func() { _, err := io.Copy(io.Discard, res.Body); ended <- err }()
			select {
			case err := <-ended:
				t.Fatalf("the stream ended before the session did: %v", err)
			case <-time.After(300 * time.Millisecond): // six keep-alives: still open
			}
			switch end {
			case "sign-out":
				if p := b.post("/logout", url.Values{"csrf": {b.csrf()}}); p.StatusCode != http.StatusSeeOther {
					t.Fatalf("sign-out = %d", p.StatusCode)
				}
			case "revoke":
				if _, err := e.st.RevokeToken(t.Context(), name); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case err := <-ended:
				if err != nil {
					t.Fatalf("the stream broke instead of ending: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("after %s the stream is still open 10s later", end)
			}
		})
	}
}

// TestLiveStreamOfAnEarlierPage: the first page of a task with more steps
// than a page holds follows the task's state, plan and fleet live, but
// not its later steps, which belong on the next page (the stream used to
// replay every one of them into the first page at once).
func TestLiveStreamOfAnEarlierPage(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, _ := e.parked("token:alice", "long and waiting")
	for i := range 500 { // with the parked run's own, more than a page holds
		if _, err := e.st.AppendEvent(t.Context(), taskID, "tool_finished", fmt.Appendf(nil, `{"tool":"bash","result":"line %d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.st.AppendEvent(t.Context(), taskID, "plan_updated", []byte(`{"plan":[{"content":"the latest plan","status":"in_progress"}]}`)); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleAdmin))
	p := b.get("/tasks/" + taskID)
	m := regexp.MustCompile(`data-last="(\d+)" data-view="story" data-live data-more>`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("the first page is not marked as having later steps:\n%.600s", p.Body)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/tasks/"+taskID+"/live?steps=0&after="+m[1], nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := e.svc.Cancel(ctx, taskID); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got []string
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			got = append(got, line)
			if strings.Contains(line, `"state":"cancelled"`) {
				break
			}
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], "the latest plan") || !strings.Contains(got[1], `"state":"cancelled"`) {
		t.Fatalf("stream = %d messages, want the plan, then the state:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, line := range got {
		if strings.Contains(line, `"html"`) {
			t.Errorf("a step was sent to a page that does not show it: %.200s", line)
		}
	}
}
