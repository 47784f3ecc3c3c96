package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/dashboard"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is the store's clock, so tests can let codes and sessions expire.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// env is a running service with the dashboard mounted on the API, as
// `reasonix serve` mounts it.
type env struct {
	t   testing.TB
	svc *runner.Service
	st  *store.Store
	clk *clock
	srv *httptest.Server
}

func newEnv(t testing.TB, p agent.Provider) *env { return newEnvWith(t, p, nil, nil) }

// newEnvWith is newEnv with settings (nil: runnertest's) and, when hooks
// is set, a Webhooks page listing these configured webhooks.
func newEnvWith(t testing.TB, p agent.Provider, set *config.Config, hooks []config.Webhook) *env {
	return newEnvOpts(t, runnertest.Options{Provider: p, Settings: set}, hooks)
}

// newEnvOpts is newEnvWith for a service assembled from o (its Store is
// the env's own).
func newEnvOpts(t testing.TB, o runnertest.Options, hooks []config.Webhook) *env {
	t.Helper()
	clk := &clock{}
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	o.Store = st
	svc := runnertest.Start(t, o)
	cfg := dashboard.Config{Service: svc, Store: st, Logger: storetest.Quiet(), KeepAlive: 50 * time.Millisecond}
	if hooks != nil {
		cfg.Webhooks = dashboard.WebhookListerFunc(func(ctx context.Context, recent int) ([]webhook.Summary, error) {
			return webhook.List(ctx, st, hooks, recent)
		})
	}
	dash, err := dashboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Logger: storetest.Quiet(), Dashboard: dash})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, svc: svc, st: st, clk: clk, srv: srv}
}

// token creates a token and returns its secret.
func (e *env) token(name string, role store.Role) string {
	e.t.Helper()
	_, secret, err := e.st.CreateToken(context.Background(), store.NewToken{Name: name, Role: role})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see each answer.
type browser struct {
	e   *env
	c   *http.Client
	jar http.CookieJar
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &browser{e: e, jar: jar, c: &http.Client{Jar: jar, Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is an answer with its body read.
type page struct {
	*http.Response
	Body string
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	res, err := b.c.Get(b.e.srv.URL + path)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return read(b.e.t, res)
}

// post sends a form as a page of the dashboard would: from its origin.
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	return b.postFrom(b.e.srv.URL, path, form)
}

func (b *browser) postFrom(origin, path string, form url.Values) page {
	b.e.t.Helper()
	req, err := http.NewRequest("POST", b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return read(b.e.t, res)
}

func read(t testing.TB, res *http.Response) page {
	t.Helper()
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return page{Response: res, Body: string(body)}
}

var (
	loginCSRF = regexp.MustCompile(`name="login_csrf" value="([0-9a-f]+)"`)
	csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
)

// signIn signs b in with secret through the form and returns the answer.
func (b *browser) signIn(secret string) page {
	b.e.t.Helper()
	form := b.get("/login")
	m := loginCSRF.FindStringSubmatch(form.Body)
	if m == nil {
		b.e.t.Fatalf("no login_csrf in the sign-in form:\n%s", form.Body)
	}
	return b.post("/login", url.Values{"token": {secret}, "login_csrf": {m[1]}})
}

// csrf reads the CSRF token from a signed-in page.
func (b *browser) csrf() string {
	b.e.t.Helper()
	p := b.get("/")
	m := csrfField.FindStringSubmatch(p.Body)
	if m == nil {
		b.e.t.Fatalf("no csrf field on / (status %d):\n%s", p.StatusCode, p.Body)
	}
	return m[1]
}

// parked submits a task for requester that waits on approval of a bash
// call, and returns its id and the approval's.
func (e *env) parked(requester, prompt string) (taskID string, ap store.Approval) {
	e.t.Helper()
	task, _, err := e.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: requester, Prompt: prompt})
	if err != nil {
		e.t.Fatal(err)
	}
	runnertest.WaitState(e.t, e.svc, task.ID, 0, store.StateWaitingApproval)
	list, err := e.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: task.ID, State: store.ApprovalPending})
	if err != nil || len(list) != 1 {
		e.t.Fatalf("pending approvals of %s = %+v, %v", task.ID, list, err)
	}
	return task.ID, list[0]
}

// bashThenDone asks for one bash call (which needs approval) and then ends.
func bashThenDone() *agenttest.ScriptedProvider {
	return agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
}
