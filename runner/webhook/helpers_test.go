package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/internal/intakebudget"
	"reasonix/runner"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/webhook"
)

const (
	ghSecret      = "gh-secret-for-tests"
	hmacKey       = "0123456789abcdef0123456789abcdef"
	hmacSecretEnv = "HOOK_HMAC"
)

var hmacSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte(hmacKey))

// env is the environment the fixture's webhooks read their secrets from.
var env = map[string]string{"GH_SECRET": ghSecret, hmacSecretEnv: hmacSecret}

func lookupEnv(k string) (string, bool) { v, ok := env[k]; return v, ok }

// ciHook is a GitHub webhook for failed check runs.
func ciHook() config.Webhook {
	return config.Webhook{Name: "ci", Kind: config.WebhookGitHub, SecretEnv: "GH_SECRET",
		Events: []string{"check_run.completed", "issues"}, Filter: `check_run.conclusion == "failure"`,
		Prompt: "CI failed on {{.check_run.head_branch}}: {{.check_run.output.summary}}", Posture: "ask"}
}

func buildHook() config.Webhook {
	return config.Webhook{Name: "build", Kind: config.WebhookHMAC, SecretEnv: hmacSecretEnv,
		Prompt: "build {{.data.id}} failed", Posture: "auto"}
}

// fixture is a real service (SQLite) behind the real HTTP API with
// webhooks mounted, and a clock the test moves.
type fixture struct {
	svc *runner.Service
	st  *store.Store
	srv *httptest.Server
	now atomic.Int64 // Unix seconds
	// scratch holds the tasks' scratch directories.
	scratch string
	// budget is the handler's intake budget, of the default size.
	budget *intakebudget.Budget
}

func start(t testing.TB, provider agent.Provider, set *config.Config, hooks ...config.Webhook) *fixture {
	return startWith(t, provider, set, nil, hooks...)
}

// startWith is start with a hook to adjust the runner's configuration.
func startWith(t testing.TB, provider agent.Provider, set *config.Config, configure func(*runner.Config), hooks ...config.Webhook) *fixture {
	t.Helper()
	f := &fixture{budget: intakebudget.New(0)}
	f.now.Store(time.Now().Unix())
	f.st = storetest.SQLite(t, store.Config{})
	if set == nil {
		set = config.Default()
		set.Runner.MaxConcurrentTasks = 2
	}
	f.svc = runnertest.Start(t, runnertest.Options{Store: f.st, Provider: provider, Settings: set,
		Configure: func(c *runner.Config) {
			f.scratch = c.ScratchDir
			if configure != nil {
				configure(c)
			}
		}})
	hs, err := webhook.Compile(hooks, lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.NewHandler(webhook.Config{Hooks: hs, Service: f.svc, Store: f.st, Logger: storetest.Quiet(), Budget: f.budget,
		Now: func() time.Time { return time.Unix(f.now.Load(), 0) }})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: f.svc, Webhooks: h, Logger: storetest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(api)
	t.Cleanup(f.srv.Close)
	return f
}

// reply is a response as the tests read it.
type reply struct {
	status int
	body   map[string]any
}

func (f *fixture) post(t testing.TB, name string, h http.Header, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest("POST", f.srv.URL+"/hooks/"+name, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &r.body); err != nil {
			t.Fatalf("reply %d %q: %v", res.StatusCode, data, err)
		}
	}
	return r
}

func githubHeaders(event, delivery string, body []byte, secret string) http.Header {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", delivery)
	h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	return h
}

func standardHeaders(id string, ts int64, body []byte) http.Header {
	m := hmac.New(sha256.New, []byte(hmacKey))
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return h
}

func checkRun(branch, summary, conclusion string) []byte {
	b, _ := json.Marshal(map[string]any{"action": "completed", "check_run": map[string]any{
		"conclusion": conclusion, "head_branch": branch, "output": map[string]any{"summary": summary}}})
	return b
}

func (f *fixture) tasks(t testing.TB) []store.Task {
	t.Helper()
	page, err := f.svc.Tasks(context.Background(), store.TaskFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return page.Tasks
}

func (f *fixture) deliveries(t testing.TB, name string) []store.Delivery {
	t.Helper()
	ds, err := f.st.Deliveries(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
