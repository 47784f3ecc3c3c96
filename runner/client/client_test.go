package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/client"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// adminToken is the service's own (bootstrap) token.
const adminToken = "admin-secret"

// service is a real runner behind the real HTTP API on loopback.
type service struct {
	t   *testing.T
	svc *runner.Service
	st  *store.Store
	srv *httptest.Server
}

type options struct {
	provider agent.Provider
	settings *config.Config
	hooks    []config.Webhook
	// wrap, when set, stands between the client and the API.
	wrap func(http.Handler) http.Handler
}

func start(t *testing.T, o options) *service {
	t.Helper()
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Provider: o.provider, Store: st, Settings: o.settings})
	if _, err := st.RegisterBootstrapToken(context.Background(), store.BootstrapName, adminToken); err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{Service: svc, Logger: storetest.Quiet(), KeepAlive: 50 * time.Millisecond}
	if o.hooks != nil {
		hs, err := webhook.Compile(o.hooks, func(string) (string, bool) { return "hook-secret", true })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Webhooks, err = webhook.NewHandler(webhook.Config{Hooks: hs, Service: svc, Store: st, Logger: storetest.Quiet()}); err != nil {
			t.Fatal(err)
		}
	}
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = api
	if o.wrap != nil {
		h = o.wrap(api)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &service{t: t, svc: svc, st: st, srv: srv}
}

// client is a client of s with secret (the admin's when empty).
func (s *service) client(secret string, opts ...client.Option) *client.Client {
	s.t.Helper()
	c, err := client.New(s.srv.URL+"/", cmpOr(secret, adminToken), opts...)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// token creates a token and returns its secret.
func (s *service) token(name string, role store.Role) string {
	s.t.Helper()
	_, secret, err := s.st.CreateToken(context.Background(), store.NewToken{Name: name, Role: role})
	if err != nil {
		s.t.Fatal(err)
	}
	return secret
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// waitState polls the task through the client until it is in one of states.
func waitState(t *testing.T, c *client.Client, id string, states ...apitype.TaskState) apitype.Task {
	t.Helper()
	var task apitype.Task
	eventually.NoError(t, 0, func() error {
		var err error
		if task, err = c.Task(t.Context(), id); err != nil {
			return err
		}
		if !slices.Contains(states, task.State) {
			return errors.New("task is " + string(task.State))
		}
		return nil
	})
	return task
}

// wantCode checks that err is the service's refusal with status and code.
func wantCode(t *testing.T, what string, err error, status int, sentinel *client.Error) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.Status != status || !errors.Is(err, sentinel) || e.Message == "" {
		t.Errorf("%s: err = %v, want %d %s", what, err, status, sentinel.Code)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	for _, tc := range []struct{ url, token string }{
		{"127.0.0.1:8080", "t"}, {"ftp://h", "t"}, {"http://", "t"}, {"http://h", " "}, {":bad", "t"},
	} {
		if _, err := client.New(tc.url, tc.token); err == nil {
			t.Errorf("New(%q, %q) succeeded", tc.url, tc.token)
		}
	}
}

// TestTasks drives a task through Submit, Task, Tasks, Events and Watch,
// with an idempotent resubmission, against a real service.
func TestTasks(t *testing.T) {
	p := agenttest.NewScriptedProvider(agenttest.Turn{Text: "all done", Usage: agent.Usage{Prompt: 5, Completion: 2}})
	s := start(t, options{provider: p})
	c := s.client("", client.WithTimeout(10*time.Second))
	ctx := t.Context()

	req := apitype.SubmitRequest{Prompt: "hello", Posture: apitype.PostureAuto, Source: apitype.SourceCLI}
	sub, err := c.Submit(ctx, req, client.IdempotencyKey("k-1"))
	if err != nil || sub.ID == "" || sub.State != apitype.StateQueued || !sub.Created {
		t.Fatalf("Submit = %+v, %v", sub, err)
	}
	again, err := c.Submit(ctx, req, client.IdempotencyKey("k-1"))
	if err != nil || again.ID != sub.ID || again.Created {
		t.Fatalf("repeated Submit = %+v, %v", again, err)
	}

	var seen []apitype.Event
	for ev, err := range c.Watch(ctx, sub.ID, 0) {
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		seen = append(seen, ev)
	}
	if len(seen) == 0 || !seen[len(seen)-1].EndsTask() {
		t.Fatalf("Watch ended without the terminal event: %+v", seen)
	}
	for i, ev := range seen {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the stream skipped or repeated", i, ev.Seq)
		}
	}

	task, err := c.Task(ctx, sub.ID)
	if err != nil || task.State != apitype.StateSucceeded || task.Source != apitype.SourceCLI || task.Requester != "token:admin" ||
		task.Posture != apitype.PostureAuto || task.Result == nil || task.Result.FinalAnswer != "all done" ||
		task.Result.Tokens.Prompt != 5 || task.FinishedAt == nil || task.Notify == nil {
		t.Fatalf("Task = %+v (result %+v), %v", task, task.Result, err)
	}

	evs, err := c.Events(ctx, sub.ID, 1, 2)
	if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Type != seen[2].Type {
		t.Fatalf("Events(after 1, limit 2) = %+v, %v", evs, err)
	}
	all, err := c.Events(ctx, sub.ID, 0, 0)
	if err != nil || len(all) != len(seen) {
		t.Fatalf("Events = %d events, %v; the stream had %d", len(all), err, len(seen))
	}

	page, err := c.Tasks(ctx, client.TaskFilter{States: []apitype.TaskState{apitype.StateSucceeded, apitype.StateFailed},
		Source: apitype.SourceCLI, Limit: 10})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != sub.ID {
		t.Fatalf("Tasks = %+v, %v", page, err)
	}
	if page, err := c.Tasks(ctx, client.TaskFilter{States: []apitype.TaskState{apitype.StateQueued}}); err != nil || len(page.Tasks) != 0 {
		t.Fatalf("queued Tasks = %+v, %v", page, err)
	}
	_, err = c.Tasks(ctx, client.TaskFilter{States: []apitype.TaskState{"bogus"}})
	wantCode(t, "Tasks(bogus)", err, http.StatusBadRequest, client.ErrInvalid)
}

// TestTaskTransitions: Message continues a finished task, Cancel and
// Resume answer with the state, and each refusal maps to its code.
func TestTaskTransitions(t *testing.T) {
	p := agenttest.NewScriptedProvider(agenttest.Turn{Text: "first"}, agenttest.Turn{Text: "second"})
	s := start(t, options{provider: p})
	c := s.client("")
	ctx := t.Context()
	sub, err := c.Submit(ctx, apitype.SubmitRequest{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, c, sub.ID, apitype.StateSucceeded)

	_, err = c.Cancel(ctx, sub.ID)
	wantCode(t, "Cancel of a finished task", err, http.StatusConflict, client.ErrConflict)
	_, err = c.Resume(ctx, sub.ID)
	wantCode(t, "Resume of a succeeded task", err, http.StatusConflict, client.ErrConflict)
	_, err = c.Message(ctx, sub.ID, "")
	wantCode(t, "empty Message", err, http.StatusBadRequest, client.ErrInvalid)
	for what, call := range map[string]func() error{
		"Task":    func() error { _, err := c.Task(ctx, "t_nope"); return err },
		"Events":  func() error { _, err := c.Events(ctx, "t_nope", 0, 0); return err },
		"Cancel":  func() error { _, err := c.Cancel(ctx, "t_nope"); return err },
		"Message": func() error { _, err := c.Message(ctx, "t_nope", "hi"); return err },
		"Resume":  func() error { _, err := c.Resume(ctx, "t_nope"); return err },
	} {
		wantCode(t, what+" of an unknown task", call(), http.StatusNotFound, client.ErrNotFound)
	}

	ref, err := c.Message(ctx, sub.ID, "and again")
	if err != nil || ref.ID != sub.ID || ref.State.Terminal() {
		t.Fatalf("Message = %+v, %v", ref, err)
	}
	waitState(t, c, sub.ID, apitype.StateSucceeded)

	// A task that waits on a person is cancelled.
	p2 := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	s2 := start(t, options{provider: p2})
	c2 := s2.client("")
	sub2, err := c2.Submit(ctx, apitype.SubmitRequest{Prompt: "needs approval"})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, c2, sub2.ID, apitype.StateWaitingApproval)
	if ref, err := c2.Cancel(ctx, sub2.ID); err != nil || ref.ID != sub2.ID {
		t.Fatalf("Cancel = %+v, %v", ref, err)
	}
	waitState(t, c2, sub2.ID, apitype.StateCancelled)
}

// TestApprovals: a parked task's approval is listed, found, refused to a
// submit token and to a stale call hash, then allowed; the task finishes.
func TestApprovals(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	s := start(t, options{provider: p})
	admin := s.client("")
	alice := s.client(s.token("alice", store.RoleSubmit))
	ctx := t.Context()
	sub, err := alice.Submit(ctx, apitype.SubmitRequest{Prompt: "needs approval"})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, admin, sub.ID, apitype.StateWaitingApproval)

	pending, err := admin.Approvals(ctx, client.ApprovalFilter{State: apitype.ApprovalPending, TaskID: sub.ID, Limit: 5})
	if err != nil || len(pending) != 1 || pending[0].Tool != "bash" || pending[0].Requester != "token:alice" ||
		pending[0].State != apitype.ApprovalPending || pending[0].CallHash == "" || pending[0].Scopes == nil {
		t.Fatalf("Approvals = %+v, %v", pending, err)
	}
	id := pending[0].ID
	if a, err := admin.Approval(ctx, id); err != nil || a.ID != id || a.TaskID != sub.ID {
		t.Fatalf("Approval = %+v, %v", a, err)
	}
	_, err = admin.Approval(ctx, "a_nope")
	wantCode(t, "Approval(a_nope)", err, http.StatusNotFound, client.ErrNotFound)
	// A unique prefix, with or without "a_", names the approval.
	for _, prefix := range []string{id[:10], strings.ToUpper(id[2:12])} {
		if got, err := admin.ResolveApproval(ctx, prefix); err != nil || got != id {
			t.Fatalf("ResolveApproval(%q) = %q, %v", prefix, got, err)
		}
	}
	_, err = admin.ResolveApproval(ctx, "a_zzzz")
	wantCode(t, "ResolveApproval(a_zzzz)", err, http.StatusNotFound, client.ErrNotFound)
	_, err = admin.Approvals(ctx, client.ApprovalFilter{Limit: 5000})
	wantCode(t, "Approvals(limit 5000)", err, http.StatusBadRequest, client.ErrInvalid)

	_, err = alice.Decide(ctx, id, apitype.DecideRequest{Decision: apitype.AllowOnce})
	wantCode(t, "a submit token deciding", err, http.StatusForbidden, client.ErrForbidden)
	_, err = admin.Decide(ctx, id, apitype.DecideRequest{Decision: apitype.AllowOnce, CallHash: "not-the-call"})
	wantCode(t, "a stale call hash", err, http.StatusConflict, client.ErrConflict)
	_, err = admin.Decide(ctx, "a_nope", apitype.DecideRequest{Decision: apitype.Deny})
	wantCode(t, "an unknown approval", err, http.StatusNotFound, client.ErrNotFound)

	a, err := admin.Decide(ctx, id, apitype.DecideRequest{Decision: apitype.AllowOnce, Note: "fine", CallHash: pending[0].CallHash})
	if err != nil || a.State != apitype.ApprovalAllowed || a.Decision != apitype.AllowOnce || a.DecidedBy != "token:admin" ||
		a.Note != "fine" || a.DecidedAt == nil {
		t.Fatalf("Decide = %+v, %v", a, err)
	}
	_, err = admin.Decide(ctx, id, apitype.DecideRequest{Decision: apitype.Deny})
	wantCode(t, "deciding twice", err, http.StatusConflict, client.ErrConflict)
	waitState(t, admin, sub.ID, apitype.StateSucceeded)
}

// TestSchedulesNodesWebhooksHealth covers the service's other reads and
// the schedule actions, with their role check.
func TestSchedulesNodesWebhooksHealth(t *testing.T) {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Berlin", Prompt: "update deps",
		Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	set.Workspaces = []config.Workspace{{Name: "app", Repo: "https://bot:s3cret@git.example.com/acme/app.git", Base: "main"}}
	hook := config.Webhook{Name: "ci", Kind: config.WebhookGitHub, SecretEnv: "GH_SECRET", Events: []string{"push"}}
	s := start(t, options{provider: agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}), settings: set,
		hooks: []config.Webhook{hook}})
	admin := s.client("")
	reader := s.client(s.token("reader", store.RoleSubmit))
	ctx := t.Context()

	list, err := reader.Schedules(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "nightly" || list[0].Timezone != "Europe/Berlin" ||
		list[0].NextRun == nil || list[0].LastRun != nil || list[0].Paused {
		t.Fatalf("Schedules = %+v, %v", list, err)
	}
	_, err = reader.PauseSchedule(ctx, "nightly")
	wantCode(t, "a submit token pausing", err, http.StatusForbidden, client.ErrForbidden)
	_, err = admin.RunSchedule(ctx, "nope")
	wantCode(t, "running an unknown schedule", err, http.StatusNotFound, client.ErrNotFound)

	if sc, err := admin.PauseSchedule(ctx, "nightly"); err != nil || !sc.Paused || sc.NextRun != nil {
		t.Fatalf("PauseSchedule = %+v, %v", sc, err)
	}
	if sc, err := admin.ResumeSchedule(ctx, "nightly"); err != nil || sc.Paused || sc.NextRun == nil {
		t.Fatalf("ResumeSchedule = %+v, %v", sc, err)
	}
	run, err := admin.RunSchedule(ctx, "nightly")
	if err != nil || run.TaskID == "" || run.Task.ID != run.TaskID || run.Task.Source != apitype.SourceCron {
		t.Fatalf("RunSchedule = %+v, %v", run, err)
	}
	waitState(t, admin, run.TaskID, apitype.StateSucceeded)

	nodes, err := reader.Nodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].State != apitype.NodeRunning || nodes[0].Running == nil || nodes[0].MaxTasks != 2 {
		t.Fatalf("Nodes = %+v, %v", nodes, err)
	}

	// The repository's URL comes without its credentials.
	wss, err := reader.Workspaces(ctx)
	if err != nil || len(wss) != 1 || wss[0] != (apitype.Workspace{Name: "app", Repo: "https://git.example.com/acme/app.git", Base: "main"}) {
		t.Fatalf("Workspaces = %+v, %v", wss, err)
	}

	hooks, err := reader.Webhooks(ctx, 3)
	if err != nil || len(hooks) != 1 || hooks[0].Name != "ci" || hooks[0].Path != "/hooks/ci" || hooks[0].Recent == nil {
		t.Fatalf("Webhooks = %+v, %v", hooks, err)
	}
	_, err = reader.Webhooks(ctx, 500)
	wantCode(t, "Webhooks(500)", err, http.StatusBadRequest, client.ErrInvalid)

	if err := reader.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
	if err := reader.Ready(ctx); err != nil {
		t.Errorf("Ready: %v", err)
	}
}

// TestAuthFailures: an unknown or revoked token is ErrUnauthorized on
// every kind of call, the stream included.
func TestAuthFailures(t *testing.T) {
	s := start(t, options{})
	revoked := s.token("gone", store.RoleAdmin)
	if _, err := s.st.RevokeToken(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, secret := range []string{"wrong", revoked} {
		c := s.client(secret)
		_, err := c.Tasks(ctx, client.TaskFilter{})
		wantCode(t, "Tasks", err, http.StatusUnauthorized, client.ErrUnauthorized)
		_, err = c.Submit(ctx, apitype.SubmitRequest{Prompt: "x"})
		wantCode(t, "Submit", err, http.StatusUnauthorized, client.ErrUnauthorized)
		for _, err := range c.Watch(ctx, "t_1", 0) {
			wantCode(t, "Watch", err, http.StatusUnauthorized, client.ErrUnauthorized)
		}
		if err := c.Health(ctx); err != nil {
			t.Errorf("Health needs no token, got %v", err)
		}
	}
}

// TestErrorsThatAreNotTheAPIs: a proxy's page keeps its status, and an
// unreachable service is net/http's error, not an *Error.
func TestErrorsThatAreNotTheAPIs(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer proxy.Close()
	c, err := client.New(proxy.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Task(t.Context(), "t_1")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Code != "Bad Gateway" || e.Message != "upstream down" ||
		errors.Is(err, client.ErrNotFound) {
		t.Errorf("a proxy's 502 = %#v", err)
	}
	proxy.Close()
	_, err = c.Task(t.Context(), "t_1")
	var ue *url.Error
	if !errors.As(err, &ue) || errors.As(err, &e) {
		t.Errorf("an unreachable service = %#v", err)
	}
}

// TestWatchResumesADroppedStream: the stream is cut after each event; the
// client reconnects after the last one it saw and sees every event once.
func TestWatchResumesADroppedStream(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	var streams atomic.Int32
	s := start(t, options{provider: p, wrap: func(api http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/events/stream") {
				api.ServeHTTP(w, r)
				return
			}
			streams.Add(1)
			api.ServeHTTP(&cutAfterOneEvent{ResponseWriter: w}, r)
		})
	}})
	c := s.client("", client.WithWatchRetries(3, time.Millisecond))
	ctx := t.Context()
	sub, err := c.Submit(ctx, apitype.SubmitRequest{Prompt: "needs approval"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	decided := false
	for ev, err := range c.Watch(ctx, sub.ID, 0) {
		if err != nil {
			t.Fatalf("Watch after %v: %v", seqs, err)
		}
		seqs = append(seqs, ev.Seq)
		if ev.Type == "approval_requested" && !decided {
			pending, err := c.Approvals(ctx, client.ApprovalFilter{State: apitype.ApprovalPending})
			if err != nil || len(pending) != 1 {
				t.Fatalf("pending = %+v, %v", pending, err)
			}
			if _, err := c.Decide(ctx, pending[0].ID, apitype.DecideRequest{Decision: apitype.AllowOnce}); err != nil {
				t.Fatal(err)
			}
			decided = true
		}
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seqs = %v: skipped or repeated", seqs)
		}
	}
	if !decided || int(streams.Load()) < len(seqs) {
		t.Errorf("decided %v, %d streams for %d events: the cut did not happen", decided, streams.Load(), len(seqs))
	}
}

// cutAfterOneEvent ends a stream's response once one event has been
// written, as a proxy that drops long connections would.
type cutAfterOneEvent struct {
	http.ResponseWriter
	done bool
}

func (w *cutAfterOneEvent) Write(b []byte) (int, error) {
	if w.done {
		return 0, http.ErrHandlerTimeout
	}
	if strings.HasPrefix(string(b), "id: ") {
		w.done = true
	}
	return w.ResponseWriter.Write(b)
}

func (w *cutAfterOneEvent) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestWatchGivesUp: a stream that cannot be resumed ends the sequence with
// the failure, after the configured tries; a cancelled context ends it
// with the context's error.
func TestWatchGivesUp(t *testing.T) {
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		// One event, then the connection ends: never the terminal one.
		w.Write([]byte("data: {\"seq\":1,\"type\":\"task_state\",\"payload\":{\"state\":\"running\"}}\n\n"))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "t", client.WithWatchRetries(2, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var last error
	for _, err := range c.Watch(t.Context(), "t_1", 0) {
		if err != nil {
			last = err
			continue
		}
		n++
	}
	if n != 1 || last == nil || tries.Load() != 3 {
		t.Errorf("events %d, err %v, tries %d: want the event once, then an error after 3 tries", n, last, tries.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, err := range c.Watch(ctx, "t_1", 0) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch with a cancelled context = %v", err)
		}
	}
}
