package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/webhook"
)

// waker is a Submitter and CIWaker that records what it was asked.
type waker struct {
	mu        sync.Mutex
	woken     []string
	waiting   map[string]int // tasks waiting per commit
	submitted int
}

func (w *waker) Submit(context.Context, runner.TaskRequest) (store.Task, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.submitted++
	return store.Task{ID: "t_submitted"}, true, nil
}

func (w *waker) WakeCI(_ context.Context, sha string) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.woken = append(w.woken, sha)
	return w.waiting[sha], nil
}

// A signed check delivery on the commit of a task waiting for CI wakes it
// and starts nothing; one on another commit goes the usual way; an
// unsigned one wakes nothing.
func TestCheckDeliveryWakesCI(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	w := &waker{waiting: map[string]int{sha: 1}}
	st := storetest.SQLite(t, store.Config{})
	hook := config.Webhook{Name: "gh", Kind: config.WebhookGitHub, SecretEnv: "GH_SECRET",
		Events: []string{"check_run.completed"}, Prompt: "CI failed", Posture: "ask"}
	hs, err := webhook.Compile([]config.Webhook{hook}, lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.NewHandler(webhook.Config{Hooks: hs, Service: w, Store: st, Logger: storetest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/{name}", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(event string, body []byte, secret string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", srv.URL+"/hooks/gh", bytes.NewReader(body))
		req.Header = githubHeaders(event, "d-"+event+string(body[len(body)-8:]), body, secret)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		return res.StatusCode, m
	}
	for _, c := range []struct{ event, body string }{
		{"check_suite", `{"action":"completed","check_suite":{"head_sha":"` + sha + `"}}`},
		{"check_run", `{"action":"completed","check_run":{"head_sha":"` + strings.ToUpper(sha) + `"}}`},
		{"status", `{"sha":"` + sha + `","state":"success"}`},
	} {
		status, body := post(c.event, []byte(c.body), ghSecret)
		if status != http.StatusAccepted || body["woke"] != float64(1) {
			t.Errorf("%s: %d %v", c.event, status, body)
		}
	}
	if w.submitted != 0 || len(w.woken) != 3 || w.woken[1] != sha {
		t.Fatalf("submitted %d, woken %v", w.submitted, w.woken)
	}
	// No task waits on this commit: the delivery is an ordinary one.
	other := strings.Repeat("cd", 20)
	if status, _ := post("check_run", []byte(`{"action":"completed","check_run":{"head_sha":"`+other+`"}}`), ghSecret); status != http.StatusAccepted || w.submitted != 1 {
		t.Errorf("a check delivery without a waiting task: %d, submitted %d", status, w.submitted)
	}
	// A forged delivery wakes nothing.
	if status, _ := post("check_suite", []byte(`{"check_suite":{"head_sha":"`+sha+`"}}`), "wrong-secret"); status != http.StatusUnauthorized || len(w.woken) != 4 {
		t.Errorf("forged: %d, woken %v", status, w.woken)
	}
	ds, err := st.Deliveries(context.Background(), "gh", 10)
	if err != nil {
		t.Fatal(err)
	}
	woke := 0
	for _, d := range ds {
		if strings.Contains(d.Reason, "waiting for CI") {
			woke++
		}
	}
	if woke != 3 {
		t.Errorf("deliveries recorded as wakes = %d of %+v", woke, ds)
	}
}

// A GitLab pipeline or job delivery with the right X-Gitlab-Token wakes
// the task waiting on its commit; a wrong or missing token is refused
// before anything else.
func TestGitLabDeliveryWakesCI(t *testing.T) {
	sha := strings.Repeat("ef", 20)
	w := &waker{waiting: map[string]int{sha: 1}}
	st := storetest.SQLite(t, store.Config{})
	hook := config.Webhook{Name: "gl", Kind: config.WebhookGitLab, SecretEnv: "GH_SECRET",
		Events: []string{"issue"}, Prompt: "issue {{.object_attributes.title}}", Posture: "ask"}
	hs, err := webhook.Compile([]config.Webhook{hook}, lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.NewHandler(webhook.Config{Hooks: hs, Service: w, Store: st, Logger: storetest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/{name}", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(token, uuid, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", srv.URL+"/hooks/gl", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("X-Gitlab-Token", token)
		}
		req.Header.Set("X-Gitlab-Event-UUID", uuid)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		return res.StatusCode, m
	}
	pipeline := `{"object_kind":"pipeline","object_attributes":{"sha":"` + sha + `","status":"success"}}`
	if status, body := post(ghSecret, "u1", pipeline); status != http.StatusAccepted || body["woke"] != float64(1) {
		t.Fatalf("pipeline: %d %v", status, body)
	}
	if status, body := post(ghSecret, "u2", `{"object_kind":"build","sha":"`+sha+`"}`); status != http.StatusAccepted || body["woke"] != float64(1) {
		t.Fatalf("job: %d %v", status, body)
	}
	for _, token := range []string{"", "wrong", ghSecret + "x", ghSecret[:len(ghSecret)-1]} {
		if status, _ := post(token, "u3", pipeline); status != http.StatusUnauthorized {
			t.Errorf("token %q: %d, want 401", token, status)
		}
	}
	if len(w.woken) != 2 {
		t.Fatalf("woken %v", w.woken)
	}
	// An issue event starts a task; other kinds are outside events.
	issue := `{"object_kind":"issue","object_attributes":{"title":"crash on start"}}`
	if status, body := post(ghSecret, "u4", issue); status != http.StatusAccepted || body["task_id"] == nil || w.submitted != 1 {
		t.Fatalf("issue: %d %v, submitted %d", status, body, w.submitted)
	}
	if status, _ := post(ghSecret, "u5", `{"object_kind":"merge_request"}`); status != http.StatusNoContent || w.submitted != 1 {
		t.Errorf("an event outside events: %d, submitted %d", status, w.submitted)
	}
}
