package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// finished submits a task for alice that succeeds at once and returns it.
func (e *env) finished(prompt string) store.Task {
	e.t.Helper()
	task, _, err := e.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: prompt})
	if err != nil {
		e.t.Fatal(err)
	}
	runnertest.WaitState(e.t, e.svc, task.ID, 0, store.StateSucceeded)
	return task
}

// prWithCI is PR #12 with its CI in state with checks.
func prWithCI(state string, checks ...store.CICheck) *store.PullRequest {
	return &store.PullRequest{URL: "https://forge.test/acme/app/pull/12", Number: 12, State: "open",
		CI: &store.CI{State: state, Commit: "0123456789abcdef0123", Checks: checks}}
}

// waitCI moves task id (in from) to waiting_ci with pr as its result's and
// the ci_updated event the runner writes with it.
func (e *env) waitCI(id string, from store.State, pr *store.PullRequest) {
	e.t.Helper()
	payload, _ := json.Marshal(map[string]any{"state": pr.CI.State, "commit": pr.CI.Commit, "checks": pr.CI.Checks,
		"pr": map[string]any{"url": pr.URL, "number": pr.Number}})
	if _, err := e.st.SetTaskState(context.Background(), id, []store.State{from}, store.StateWaitingCI,
		&store.StateOpts{Result: &store.Result{Publish: "pr", PR: pr}, Events: []store.EventInput{{Type: "ci_updated", Payload: payload}}}); err != nil {
		e.t.Fatal(err)
	}
}

// TestTaskPageShowsThePRAndItsChecks: a task waiting for CI shows its pull
// request and each check with its state and link; a check that changes
// reaches an open page through the live stream, rendered and escaped.
func TestTaskPageShowsThePRAndItsChecks(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}))
	task := e.finished("fix CI")
	e.waitCI(task.ID, store.StateSucceeded, prWithCI(store.CIWaiting,
		store.CICheck{Name: "build", State: "success", URL: "https://ci.test/build/1"},
		store.CICheck{Name: "test <b>race</b>", State: "pending", URL: "javascript:alert(1)"}))
	b := e.browser()
	b.signIn(e.token("alice", store.RoleSubmit))
	p := b.get("/tasks/" + task.ID).Body
	for _, want := range []string{`href="https://forge.test/acme/app/pull/12"`, "#12", "CI waiting", "1/2 passing", "<code>0123456789ab</code>",
		`<a href="https://ci.test/build/1" rel="noreferrer">build</a>`, "test &lt;b&gt;race&lt;/b&gt;", `data-i="✓"`, `data-i="▸"`} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(p, "javascript:") {
		t.Error("a check's javascript: link reached the page")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	evs, err := e.svc.Events(ctx, task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// steps=0: a page that follows only the state still follows the checks.
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/tasks/"+task.ID+"/live?steps=0&after="+
		jsonInt(evs[len(evs)-1].Seq), nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	e.waitCI(task.ID, store.StateWaitingCI, prWithCI(store.CIFixing,
		store.CICheck{Name: "build", State: "success"}, store.CICheck{Name: "test", State: "failure", URL: "https://ci.test/test/2"}))
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct{ PR *string }
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		if msg.PR == nil {
			continue
		}
		for _, want := range []string{"CI fixing", "1/2 passing", `<a href="https://ci.test/test/2" rel="noreferrer">test</a>`, `data-i="✗"`} {
			if !strings.Contains(*msg.PR, want) {
				t.Errorf("the live update lacks %q: %s", want, *msg.PR)
			}
		}
		return
	}
	t.Fatalf("the stream ended without the checks' update: %v", sc.Err())
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestTaskPageShowsInstructionsUsed: the instruction files the prompt held
// are listed on the task page with the commit they were read at and their
// sizes; a cut one says so.
func TestTaskPageShowsInstructionsUsed(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}, agenttest.Turn{Text: "ok"}))
	task := e.finished("follow the rules")
	raw, _ := json.Marshal(map[string]any{"commit": "feedfacecafebeef0000", "files": []map[string]any{
		{"scope": "user", "path": "AGENTS.md", "bytes": 120},
		{"scope": "project", "path": "REASONIX.md", "bytes": 2048, "truncated": true},
		{"scope": "project", "path": "pkg/<x>/AGENTS.md", "bytes": 0, "skipped": "too large"}}})
	if _, err := e.st.AppendEvent(t.Context(), task.ID, "instructions", raw); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(e.token("alice", store.RoleSubmit))
	p := b.get("/tasks/" + task.ID).Body
	for _, want := range []string{"Instructions used: 3 file(s) at <code>feedfacecafe</code>", "<code>user:AGENTS.md</code>", "120 B",
		"<code>REASONIX.md</code>", "2.0 KB · cut at the bound", "pkg/&lt;x&gt;/AGENTS.md", "left out: too large"} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if other := e.finished("no instructions"); strings.Contains(b.get("/tasks/"+other.ID).Body, "Instructions used") {
		t.Error("a task whose prompt held no instruction files lists some")
	}
}

// TestApprovalsPageBudgetCard: a budget card on the approvals page offers
// "+ the same budget", Stop and Stop and publish what exists; the last is
// decided through Service.Decide (as the chat's button) and shows as such.
func TestApprovalsPageBudgetCard(t *testing.T) {
	set := config.Default()
	set.Runner.MaxCostPerTask = 0.5
	e := newEnvWith(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}), set, nil)
	task := e.finished("spend")
	card, err := e.st.CreateApproval(t.Context(), store.NewApproval{TaskID: task.ID, Tool: "budget", Subject: "cost_budget",
		CallHash: "budget-hash", Preview: "Budget reached: the cost budget.\nSpent: $0.5012, 1200 tokens.", Requester: "token:alice",
		ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	alice := e.browser()
	alice.signIn(e.token("alice", store.RoleApprove))
	if p := alice.get("/approvals").Body; !strings.Contains(p, "More budget?") || strings.Contains(p, `value="stop_publish"`) {
		t.Errorf("the requester sees no card, or buttons on her own task's card")
	}
	bob := e.browser()
	bob.signIn(e.token("bob", store.RoleApprove))
	p := bob.get("/approvals").Body
	for _, want := range []string{"More budget?", "Spent: $0.5012, 1200 tokens.", `value="allow_once" class="allow">+ $0.5</button>`,
		`value="deny" class="deny">Stop</button>`, `value="stop_publish" class="deny">Stop and publish what exists</button>`, "no answer means stop"} {
		if !strings.Contains(p, want) {
			t.Errorf("the approvals page lacks %q", want)
		}
	}
	if strings.Contains(p, ">Allow once<") || strings.Contains(p, ">Deny<") {
		t.Error("a budget card offers a call's choices")
	}
	res := bob.post("/approvals/"+card.ID, url.Values{"csrf": {bob.csrf()}, "decision": {"stop_publish"}, "call_hash": {"budget-hash"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop and publish = %d:\n%s", res.StatusCode, res.Body)
	}
	got, err := e.svc.Approval(t.Context(), card.ID)
	if err != nil || got.Decision != store.StopPublish || got.DecidedBy != "token:bob" {
		t.Fatalf("the card = %+v, %v; want stop_publish by token:bob", got, err)
	}
	if p := bob.get("/approvals").Body; !strings.Contains(p, "Stopped; what exists is published by token:bob") {
		t.Error("the decided card does not say it was stopped and published")
	}
	// A call's choice on a budget card is refused by the service, not the page.
	if res := bob.post("/approvals/"+card.ID, url.Values{"csrf": {bob.csrf()}, "decision": {"allow_task"}}); res.StatusCode < 400 {
		t.Errorf("allow_task on a budget card = %d", res.StatusCode)
	}
}

// TestMemoryPage: the memory page lists the memories the viewer may see
// with scope, who, when and the source task, and offers Forget only where
// the service allows it; forgetting goes through the service.
func TestMemoryPage(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}))
	task := e.finished("remember things")
	add := func(scope, text, by, taskID string) store.Memory {
		sc, err := store.ParseMemoryScope(scope)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := e.st.AddMemory(t.Context(), store.NewMemory{Scope: sc, Text: text, By: by, TaskID: taskID})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ws := add("workspace:repo", "run <b>make lint</b> before committing", "token:bob", task.ID)
	own := add("user:token:carol", "carol prefers short answers", "token:carol", "")
	other := add("user:token:dave", "dave's secret plan", "token:dave", "")

	carol := e.browser()
	carol.signIn(e.token("carol", store.RoleSubmit))
	p := carol.get("/memories").Body
	for _, want := range []string{`<a href="/memories"`, "run &lt;b&gt;make lint&lt;/b&gt; before committing", "<code>workspace:repo</code>",
		"token:bob", `href="/tasks/` + task.ID + `"`, "carol prefers short answers", `action="/memories/` + own.ID + `/forget"`} {
		if !strings.Contains(p, want) {
			t.Errorf("carol's memory page lacks %q", want)
		}
	}
	if strings.Contains(p, "dave") {
		t.Error("carol sees another person's memory")
	}
	if strings.Contains(p, `action="/memories/`+ws.ID+`/forget"`) {
		t.Error("carol is offered to forget a workspace memory bob saved")
	}
	if res := carol.post("/memories/"+ws.ID+"/forget", url.Values{"csrf": {carol.csrf()}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("carol forgetting the workspace memory = %d, want 403", res.StatusCode)
	}
	if res := carol.post("/memories/"+other.ID+"/forget", url.Values{"csrf": {carol.csrf()}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("carol forgetting dave's memory = %d, want 404", res.StatusCode)
	}
	if res := carol.post("/memories/"+own.ID+"/forget", url.Values{"csrf": {carol.csrf()}, "scope": {"user:token:carol"}}); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/memories?scope=user%3Atoken%3Acarol" {
		t.Fatalf("carol forgetting her own = %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if m, err := e.st.Memory(t.Context(), own.ID); err != nil || m.Live() || m.ForgottenBy != "token:carol" {
		t.Fatalf("her memory after forget = %+v, %v", m, err)
	}
	if p := carol.get("/memories").Body; strings.Contains(p, "carol prefers short answers") {
		t.Error("a forgotten memory is listed without include forgotten")
	}
	if p := carol.get("/memories?all=1").Body; !strings.Contains(p, "forgotten by token:carol") {
		t.Error("include forgotten does not show who forgot it")
	}
	if p := carol.get("/memories?scope=nonsense"); p.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed scope = %d, want 400", p.StatusCode)
	}
	// An admin may forget the workspace memory.
	admin := e.browser()
	admin.signIn(e.token("root", store.RoleAdmin))
	if p := admin.get("/memories").Body; !strings.Contains(p, `action="/memories/`+ws.ID+`/forget"`) || !strings.Contains(p, "dave&#39;s secret plan") {
		t.Error("an admin is not offered every memory")
	}
}

// TestApprovalsPageNoDeadline: an approval without a deadline says so
// instead of showing a zero time, and comes after those with a deadline.
func TestApprovalsPageNoDeadline(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}))
	task := e.finished("wait for me")
	for _, na := range []store.NewApproval{
		{TaskID: task.ID, Tool: "bash", Subject: "git push", CallHash: "h-forever", Requester: "token:alice", NoDeadline: true},
		{TaskID: task.ID, Tool: "bash", Subject: "make deploy", CallHash: "h-soon", Requester: "token:alice", ExpiresAt: time.Now().Add(time.Hour)},
	} {
		if _, err := e.st.CreateApproval(t.Context(), na); err != nil {
			t.Fatal(err)
		}
	}
	bob := e.browser()
	bob.signIn(e.token("bob", store.RoleApprove))
	p := bob.get("/approvals").Body
	if !strings.Contains(p, "No deadline: it waits for an answer") || strings.Contains(p, "0001-01-01") {
		t.Errorf("the approvals page does not say the request has no deadline:\n%s", p)
	}
	if soon, forever := strings.Index(p, "make deploy"), strings.Index(p, "git push"); soon < 0 || forever < 0 || soon > forever {
		t.Errorf("the request with a deadline (at %d) should come before the one without (at %d)", soon, forever)
	}
}
