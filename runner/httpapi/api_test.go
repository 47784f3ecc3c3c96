package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/policy"
	"reasonix/runner"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// token is the service's own (bootstrap) token: an admin.
const token = "s3cret-token"

type env struct {
	t   *testing.T
	svc *runner.Service
	st  *store.Store
	srv *httptest.Server
	// secret is the bearer token do sends; token unless as changed it.
	secret string
}

func newEnv(t *testing.T, p agent.Provider) *env { return newEnvWith(t, p, nil) }

// newEnvWith is newEnv with settings (nil = runnertest's default).
func newEnvWith(t *testing.T, p agent.Provider, set *config.Config) *env {
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Store: st, Settings: set})
	if _, err := st.RegisterBootstrapToken(context.Background(), store.BootstrapName, token); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Logger: nil, KeepAlive: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, svc: svc, st: st, srv: srv, secret: token}
}

// newToken creates a token (maxPosture "" = the role's default) and
// returns its secret.
func (e *env) newToken(name string, role store.Role, maxPosture policy.Posture) string {
	e.t.Helper()
	_, secret, err := e.st.CreateToken(context.Background(), store.NewToken{Name: name, Role: role, MaxPosture: maxPosture})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// as is e sending secret instead.
func (e *env) as(secret string) *env {
	c := *e
	c.secret = secret
	return &c
}

// do sends a request with the token and decodes a JSON answer into out.
func (e *env) do(method, path, body string, hdr map[string]string, out any) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decoding %q: %v", method, path, b, err)
		}
	}
	return res
}

func (e *env) status(method, path, body string) (int, string) {
	e.t.Helper()
	var er struct{ Code, Message string }
	res := e.do(method, path, body, nil, &er)
	return res.StatusCode, er.Code
}

type created struct {
	ID      string
	State   string
	Created bool
}

func (e *env) waitTask(id string, states ...string) map[string]any {
	e.t.Helper()
	var v map[string]any
	eventually.NoError(e.t, 0, func() error {
		v = nil
		e.do("GET", "/api/v1/tasks/"+id, "", nil, &v)
		if !slices.Contains(states, fmt.Sprint(v["state"])) {
			return fmt.Errorf("task %s is %v, want one of %v", id, v["state"], states)
		}
		return nil
	})
	return v
}

func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	for _, h := range []string{"", "Bearer wrong", "Basic " + token, "Bearer " + token + "x"} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/tasks", nil)
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var er struct{ Code string }
		_ = json.NewDecoder(res.Body).Decode(&er)
		res.Body.Close()
		if res.StatusCode != 401 || er.Code != "unauthorized" || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("auth %q: %d %q %q", h, res.StatusCode, er.Code, res.Header.Get("WWW-Authenticate"))
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		res, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s = %d", path, res.StatusCode)
		}
		if path == "/metrics" && !strings.Contains(string(b), "reasonix_queue_depth") {
			t.Errorf("/metrics lacks reasonix_queue_depth")
		}
	}
	if _, err := httpapi.New(httpapi.Config{}); err == nil {
		t.Error("New without a service succeeded")
	}
}

func TestTaskRoutes(t *testing.T) {
	p := agenttest.NewScriptedProvider(agenttest.Turn{Text: "all done", Usage: agent.Usage{Prompt: 5, Completion: 2}})
	e := newEnv(t, p)
	var c created
	res := e.do("POST", "/api/v1/tasks", `{"prompt":"hello","posture":"auto"}`, map[string]string{"Idempotency-Key": "idem-1"}, &c)
	if res.StatusCode != 202 || c.ID == "" || c.State != "queued" || !c.Created {
		t.Fatalf("create = %d %+v", res.StatusCode, c)
	}
	var again created
	if res := e.do("POST", "/api/v1/tasks", `{"prompt":"hello"}`, map[string]string{"Idempotency-Key": "idem-1"}, &again); res.StatusCode != 200 || again.ID != c.ID || again.Created {
		t.Fatalf("idempotent create = %d %+v", res.StatusCode, again)
	}
	v := e.waitTask(c.ID, "succeeded", "failed")
	if v["state"] != "succeeded" || v["requester"] != "token:admin" {
		t.Fatalf("task = %v", v)
	}
	if r, _ := v["result"].(map[string]any); r["final_answer"] != "all done" {
		t.Fatalf("result = %v", v["result"])
	}
	var evs struct {
		Events []struct {
			Seq  int64
			Type string
		}
	}
	e.do("GET", "/api/v1/tasks/"+c.ID+"/events?after=1", "", nil, &evs)
	if len(evs.Events) == 0 || evs.Events[0].Seq != 2 {
		t.Fatalf("events after 1 = %+v", evs.Events)
	}
	var list struct {
		Tasks      []map[string]any
		NextCursor string `json:"next_cursor"`
	}
	e.do("GET", "/api/v1/tasks?state=succeeded&source=api&limit=10", "", nil, &list)
	if len(list.Tasks) != 1 || list.Tasks[0]["id"] != c.ID {
		t.Fatalf("list = %+v", list)
	}
	e.do("GET", "/api/v1/tasks?state=queued", "", nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("queued list = %+v", list)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/api/v1/tasks/t_nope", "", 404, "not_found"},
		{"GET", "/api/v1/tasks/t_nope/events", "", 404, "not_found"},
		{"GET", "/api/v1/tasks?state=bogus", "", 400, "invalid"},
		{"GET", "/api/v1/tasks?source=bogus", "", 400, "invalid"},
		{"GET", "/api/v1/tasks?limit=0", "", 400, "invalid"},
		{"GET", "/api/v1/tasks?limit=501", "", 400, "invalid"},
		{"GET", "/api/v1/approvals?limit=1001", "", 400, "invalid"},
		{"GET", "/api/v1/approvals?limit=1e3", "", 400, "invalid"},
		{"GET", "/api/v1/tasks/" + c.ID + "/events?after=-1", "", 400, "invalid"},
		{"GET", "/api/v1/tasks/" + c.ID + "/events?limit=x", "", 400, "invalid"},
		{"POST", "/api/v1/tasks/" + c.ID + "/cancel", "", 409, "conflict"},
		{"POST", "/api/v1/tasks/t_nope/cancel", "", 404, "not_found"},
		{"POST", "/api/v1/tasks/" + c.ID + "/resume", "", 409, "conflict"},
		{"POST", "/api/v1/tasks/" + c.ID + "/messages", `{"text":""}`, 400, "invalid"},
		{"POST", "/api/v1/tasks/t_nope/messages", `{"text":"hi"}`, 404, "not_found"},
		{"GET", "/api/v1/nothing", "", 404, "not_found"},
		{"GET", "/api/v1/approvals?state=bogus", "", 400, "invalid"},
		{"POST", "/api/v1/approvals/a_nope", `{"decision":"allow_once"}`, 404, "not_found"},
		{"POST", "/api/v1/approvals/a_nope", `{"decision":"maybe"}`, 400, "invalid"},
	} {
		if st, code := e.status(tc.method, tc.path, tc.body); st != tc.status || code != tc.code {
			t.Errorf("%s %s %s = %d %q, want %d %q", tc.method, tc.path, tc.body, st, code, tc.status, tc.code)
		}
	}
}

// TestErrorMessagesAreForPeople: a 4xx body says what was wrong in the
// runner's own words for the requester, with no package prefixes or
// wrapped internals.
func TestErrorMessagesAreForPeople(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/api/v1/tasks/t_nope", "", "task t_nope not found"},
		{"POST", "/api/v1/approvals/a_nope", `{"decision":"deny"}`, "approval a_nope not found"},
		{"POST", "/api/v1/tasks", `{"prompt":"x","posture":"reckless"}`, `posture "reckless" is not one of ask, auto, yolo`},
		{"POST", "/api/v1/tasks", `{"prompt":"x","workspace":"nowhere"}`, `unknown workspace "nowhere": no workspaces are configured`},
		{"POST", "/api/v1/tasks", `{"prompt":"x","budget_usd":2}`, `budget_usd is a goal's cost budget; submit the task as a goal, or bound any task with [runner] max_cost_per_task`},
		{"POST", "/api/v1/tasks", `{"prompt":"x","goal":true,"budget_usd":-2}`, `budget_usd must be between 0 and 1000000 USD`},
		{"POST", "/api/v1/tasks", `{"prompt":"x","goal":true,"ablate":"planner"}`, `ablate takes "subagent"`},
	} {
		var er struct{ Code, Message string }
		e.do(tc.method, tc.path, tc.body, nil, &er)
		if er.Message != tc.want {
			t.Errorf("%s %s: message %q, want %q", tc.method, tc.path, er.Message, tc.want)
		}
	}
}

// TestBadBodies: malformed, oversized, unknown-field and invalid requests
// are 4xx and create nothing.
func TestBadBodies(t *testing.T) {
	e := newEnv(t, nil)
	big := `{"prompt":"` + strings.Repeat("x", httpapi.MaxBody) + `"}`
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"prompt":"x","colour":"red"}`, 400},
		{`{"prompt":`, 400},
		{``, 400},
		{`[]`, 400},
		{`{"prompt":42}`, 400},
		{`{"prompt":"x"} {"prompt":"y"}`, 400},
		{`{"prompt":"   "}`, 400},
		{`{"prompt":"x","posture":"reckless"}`, 400},
		{`{"prompt":"x","workspace":"nowhere"}`, 400},
		{`{"prompt":"x","source":"slack"}`, 400},
		{`{"prompt":"` + strings.Repeat("y", runner.MaxPromptBytes+1) + `"}`, 400},
		{big, 413},
	} {
		if st, _ := e.status("POST", "/api/v1/tasks", tc.body); st != tc.status {
			t.Errorf("body %.40q = %d, want %d", tc.body, st, tc.status)
		}
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/tasks", strings.NewReader(`{"prompt":"x"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 415 {
		t.Errorf("text/plain = %d, want 415", res.StatusCode)
	}
	var list struct{ Tasks []any }
	e.do("GET", "/api/v1/tasks", "", nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("bad requests created %d tasks", len(list.Tasks))
	}
}

func TestApprovalRoutes(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	e := newEnv(t, p)
	alice := e.as(e.newToken("alice", store.RoleApprove, ""))
	bob := e.as(e.newToken("bob", store.RoleApprove, ""))
	carol := e.as(e.newToken("carol", store.RoleApprove, ""))
	var c created
	alice.do("POST", "/api/v1/tasks", `{"prompt":"needs approval"}`, nil, &c)
	e.waitTask(c.ID, "waiting_approval")
	var list struct{ Approvals []map[string]any }
	e.do("GET", "/api/v1/approvals?state=pending", "", nil, &list)
	if len(list.Approvals) != 1 || list.Approvals[0]["task_id"] != c.ID || list.Approvals[0]["tool"] != "bash" {
		t.Fatalf("pending = %+v", list)
	}
	id := list.Approvals[0]["id"].(string)
	for _, tc := range []struct {
		who    *env
		body   string
		status int
		code   string
	}{
		{bob, `{"decision":"allow"}`, 400, "invalid"},
		{alice, `{"decision":"allow_once"}`, 403, "forbidden"},
		{bob, `{"decision":"allow_once","approver":"carol"}`, 400, "invalid"},
		{bob, `{"decision":"allow_once","call_hash":"abc"}`, 409, "conflict"},
		{bob, `{"decision":"allow_once","extra":1}`, 400, "invalid"},
	} {
		if st, code := tc.who.status("POST", "/api/v1/approvals/"+id, tc.body); st != tc.status || code != tc.code {
			t.Errorf("decide %s = %d %q, want %d %q", tc.body, st, code, tc.status, tc.code)
		}
	}
	var ap map[string]any
	if res := bob.do("POST", "/api/v1/approvals/"+id, `{"decision":"allow_once"}`, nil, &ap); res.StatusCode != 200 || ap["state"] != "allowed" || ap["decided_by"] != "token:bob" {
		t.Fatalf("decide = %d %v", res.StatusCode, ap)
	}
	if st, code := carol.status("POST", "/api/v1/approvals/"+id, `{"decision":"deny"}`); st != 409 || code != "conflict" {
		t.Fatalf("second decision = %d %q", st, code)
	}
	e.waitTask(c.ID, "succeeded")

	// The task's time is split by where it was: it ran, and it waited for
	// bob. The final report (what chat shows) carries the same wait.
	type durations struct {
		QueuedMS  *int64 `json:"queued_ms"`
		RunningMS *int64 `json:"running_ms"`
		WaitingMS *int64 `json:"waiting_ms"`
	}
	var task struct{ Durations durations }
	e.do("GET", "/api/v1/tasks/"+c.ID, "", nil, &task)
	d := task.Durations
	if d.QueuedMS == nil || d.RunningMS == nil || d.WaitingMS == nil || *d.RunningMS <= 0 || *d.WaitingMS <= 0 {
		t.Fatalf("durations = %+v, want running and waiting time", d)
	}
	var evs struct {
		Events []struct {
			Type    string
			Payload struct{ Durations durations }
		}
	}
	e.do("GET", "/api/v1/tasks/"+c.ID+"/events", "", nil, &evs)
	reported := false
	for _, ev := range evs.Events {
		if ev.Type == "final_report" {
			w := ev.Payload.Durations.WaitingMS
			reported = w != nil && *w == *d.WaitingMS
		}
	}
	if !reported {
		t.Errorf("the final report does not carry the task's wait of %d ms: %+v", *d.WaitingMS, evs.Events)
	}
}

func TestCancelAndMessage(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "continued"})
	e := newEnv(t, p)
	var c created
	e.do("POST", "/api/v1/tasks", `{"prompt":"wait for me"}`, nil, &c)
	e.waitTask(c.ID, "waiting_approval")
	var got created
	if res := e.do("POST", "/api/v1/tasks/"+c.ID+"/messages", `{"text":"also do X"}`, nil, &got); res.StatusCode != 202 {
		t.Fatalf("message = %d", res.StatusCode)
	}
	if res := e.do("POST", "/api/v1/tasks/"+c.ID+"/cancel", "", nil, &got); res.StatusCode != 202 || got.State != "cancelled" {
		t.Fatalf("cancel = %d %+v", res.StatusCode, got)
	}
	if st, code := e.status("POST", "/api/v1/tasks/"+c.ID+"/cancel", ""); st != 409 || code != "conflict" {
		t.Fatalf("second cancel = %d %q", st, code)
	}
	if st, _ := e.status("POST", "/api/v1/tasks/"+c.ID+"/messages", `{"text":"more"}`); st != 409 {
		t.Fatalf("message to a cancelled task = %d", st)
	}
}

// TestEventStream: the SSE route replays events after Last-Event-ID, then
// delivers new ones live, each with id = seq.
func TestEventStream(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	e := newEnv(t, p)
	var c created
	e.do("POST", "/api/v1/tasks", `{"prompt":"stream me"}`, nil, &c)
	e.waitTask(c.ID, "waiting_approval")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/v1/tasks/"+c.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.secret)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", "2")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	next := func() (int64, string) {
		var id int64
		var typ string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				fmt.Sscan(strings.TrimPrefix(line, "id: "), &id)
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case line == "" && id != 0:
				return id, typ
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return 0, ""
	}
	if id, _ := next(); id != 3 {
		t.Fatalf("first replayed id = %d, want 3", id)
	}
	// Decide: the live part of the stream shows the decision and the end.
	var list struct{ Approvals []map[string]any }
	e.do("GET", "/api/v1/approvals?state=pending", "", nil, &list)
	e.do("POST", "/api/v1/approvals/"+list.Approvals[0]["id"].(string), `{"decision":"allow_once"}`, nil, nil)
	last := int64(3)
	for {
		id, typ := next()
		if id != last+1 {
			t.Fatalf("event id %d after %d: a gap or a repeat", id, last)
		}
		last = id
		if typ == "final_report" {
			break
		}
	}
}

// FuzzCreateTask: no request body makes the API fail with a 5xx or panic.
func FuzzCreateTask(f *testing.F) {
	for _, s := range []string{`{"prompt":"x"}`, `{"prompt":"x","notify":[{"transport":"slack","channel":"C"}]}`,
		`{"prompt":"x","approvers":["a",""]}`, `{"prompt":null}`, `{}`, `[`, `{"goal":"yes"}`, "\x00", `{"prompt":"\ud800"}`} {
		f.Add(s)
	}
	st := storetest.SQLite(f, store.Config{})
	svc := runnertest.Start(f, runnertest.Options{Store: st})
	if _, err := st.RegisterBootstrapToken(context.Background(), store.BootstrapName, token); err != nil {
		f.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/api/v1/tasks", "/api/v1/approvals/a_x", "/api/v1/tasks/t_x/messages"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, req)
			if w.Code >= 500 {
				t.Fatalf("POST %s %q = %d %s", path, body, w.Code, w.Body)
			}
		}
	})
}

// TestGoalBudgetUSD: a goal's own cost budget is taken and shown.
func TestGoalBudgetUSD(t *testing.T) {
	e := newEnv(t, nil)
	var c created
	if res := e.do("POST", "/api/v1/tasks", `{"prompt":"spend wisely","goal":true,"budget_usd":2.5}`, nil, &c); res.StatusCode != 202 {
		t.Fatalf("create = %d %+v", res.StatusCode, c)
	}
	var v map[string]any
	e.do("GET", "/api/v1/tasks/"+c.ID, "", nil, &v)
	if v["budget_usd"] != 2.5 || v["goal"] != true {
		t.Fatalf("task = %v", v)
	}
}

// TestGoalAblateOption: a goal's ablation arm is taken and shown.
func TestGoalAblateOption(t *testing.T) {
	e := newEnv(t, nil)
	var c created
	if res := e.do("POST", "/api/v1/tasks", `{"prompt":"alone","goal":true,"ablate":"subagent"}`, nil, &c); res.StatusCode != 202 {
		t.Fatalf("create = %d %+v", res.StatusCode, c)
	}
	var v map[string]any
	e.do("GET", "/api/v1/tasks/"+c.ID, "", nil, &v)
	if v["ablate"] != "subagent" {
		t.Fatalf("task = %v", v)
	}
}
