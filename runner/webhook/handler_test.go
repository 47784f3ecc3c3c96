package webhook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestGitHubAcceptedOnceThenDuplicate: a signed check_run failure starts
// one task as webhook:ci under the entry's posture, with its origin in the
// first event; the same delivery four times and a replay under a new
// delivery id return that task and start no other.
func TestGitHubAcceptedOnceThenDuplicate(t *testing.T) {
	f := start(t, nil, nil, ciHook())
	body := checkRun("main", "2 tests failed", "failure")
	var first string
	for i := range 4 {
		r := f.post(t, "ci", githubHeaders("check_run", "d-1", body, ghSecret), body)
		want := http.StatusOK
		if i == 0 {
			want, first = http.StatusAccepted, fmt.Sprint(r.body["task_id"])
		}
		if r.status != want || r.body["task_id"] != first {
			t.Fatalf("delivery %d: %d %v (first task %s)", i, r.status, r.body, first)
		}
	}
	replay := f.post(t, "ci", githubHeaders("check_run", "d-2-new-id", body, ghSecret), body)
	if replay.status != http.StatusOK || replay.body["task_id"] != first || replay.body["duplicate"] != true {
		t.Fatalf("replay under a new delivery id: %d %v", replay.status, replay.body)
	}
	tasks := f.tasks(t)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	task := tasks[0]
	if task.Requester != "webhook:ci" || task.Source != store.SourceWebhook || task.Posture != "ask" || len(task.Approvers) != 0 {
		t.Fatalf("task = %+v", task)
	}
	if !strings.Contains(task.Prompt, "<webhook-payload name=\"ci\" delivery=\"d-1\" event=\"check_run.completed\">\nCI failed on main: 2 tests failed\n</webhook-payload>") {
		t.Fatalf("prompt:\n%s", task.Prompt)
	}
	evs := runnertest.Events(t, f.svc, task.ID, "task_state")
	var first0 struct {
		Origin map[string]string `json:"origin"`
	}
	if len(evs) == 0 || json.Unmarshal(evs[0].Payload, &first0) != nil || first0.Origin["delivery"] != "d-1" ||
		first0.Origin["webhook"] != "ci" || first0.Origin["event"] != "check_run.completed" {
		t.Fatalf("first event does not carry the origin: %s", evs[0].Payload)
	}
	ds := f.deliveries(t, "ci")
	if len(ds) != 5 || ds[4].Outcome != store.DeliveryAccepted || ds[0].Outcome != store.DeliveryDuplicate || ds[0].TaskID != first {
		t.Fatalf("deliveries = %+v", ds)
	}
}

// TestGitHubRefusedSignatures: every bad or missing signature is a 401
// that stores no task, and is recorded with its reason.
func TestGitHubRefusedSignatures(t *testing.T) {
	f := start(t, nil, nil, ciHook())
	body := checkRun("main", "x", "failure")
	good := githubHeaders("check_run", "d-1", body, ghSecret)
	flipped := bytes.Clone(body)
	flipped[len(flipped)-2] ^= 1
	cases := map[string]func() (http.Header, []byte){
		"flipped byte": func() (http.Header, []byte) { return good.Clone(), flipped },
		"wrong secret": func() (http.Header, []byte) { return githubHeaders("check_run", "d-1", body, "guess"), body },
		"sha1 only": func() (http.Header, []byte) {
			h := good.Clone()
			h.Del("X-Hub-Signature-256")
			h.Set("X-Hub-Signature", "sha1=0123456789012345678901234567890123456789")
			return h, body
		},
		"bad hex": func() (http.Header, []byte) {
			h := good.Clone()
			h.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("g", 64))
			return h, body
		},
		"empty header": func() (http.Header, []byte) {
			h := good.Clone()
			h.Set("X-Hub-Signature-256", "")
			return h, body
		},
		"bearer token is no credential": func() (http.Header, []byte) {
			h := good.Clone()
			h.Del("X-Hub-Signature-256")
			h.Set("Authorization", "Bearer anything")
			return h, body
		},
	}
	for name, mk := range cases {
		h, b := mk()
		if r := f.post(t, "ci", h, b); r.status != http.StatusUnauthorized || r.body["task_id"] != nil || r.body["code"] != "unauthorized" {
			t.Errorf("%s: %d %v, want 401", name, r.status, r.body)
		}
	}
	if n := len(f.tasks(t)); n != 0 {
		t.Fatalf("%d tasks stored after forged deliveries", n)
	}
	ds := f.deliveries(t, "ci")
	if len(ds) != len(cases) {
		t.Fatalf("%d deliveries recorded, want %d", len(ds), len(cases))
	}
	reasons := map[string]bool{}
	for _, d := range ds {
		if d.Outcome != store.DeliveryRejected || d.Status != 401 || d.Reason == "" {
			t.Fatalf("delivery = %+v", d)
		}
		reasons[d.Reason] = true
	}
	for _, want := range []string{"the signature does not match", "the signature header is malformed", "the signature header is missing"} {
		if !reasons[want] {
			t.Errorf("no delivery recorded %q: %v", want, reasons)
		}
	}
	if !strings.Contains(fmt.Sprint(reasons), "SHA-1 is refused") {
		t.Errorf("the sha1-only delivery is not recorded as such: %v", reasons)
	}
}

// TestIgnoredDeliveries: ping, events outside the list and payloads the
// filter rejects are 204 and start nothing; an unknown webhook is 404.
func TestIgnoredDeliveries(t *testing.T) {
	f := start(t, nil, nil, ciHook())
	ping := []byte(`{"zen":"Keep it logically awesome."}`)
	if r := f.post(t, "ci", githubHeaders("ping", "p-1", ping, ghSecret), ping); r.status != http.StatusNoContent {
		t.Fatalf("ping: %d", r.status)
	}
	push := []byte(`{"ref":"refs/heads/main"}`)
	if r := f.post(t, "ci", githubHeaders("push", "p-2", push, ghSecret), push); r.status != http.StatusNoContent {
		t.Fatalf("push: %d", r.status)
	}
	green := checkRun("main", "ok", "success")
	if r := f.post(t, "ci", githubHeaders("check_run", "p-3", green, ghSecret), green); r.status != http.StatusNoContent {
		t.Fatalf("green check run: %d", r.status)
	}
	if r := f.post(t, "nope", githubHeaders("ping", "p-4", ping, ghSecret), ping); r.status != http.StatusNotFound {
		t.Fatalf("unknown webhook: %d", r.status)
	}
	if n := len(f.tasks(t)); n != 0 {
		t.Fatalf("%d tasks", n)
	}
	ds := f.deliveries(t, "ci")
	if len(ds) != 3 || ds[0].Reason != "the payload does not match the filter" || ds[1].Event != "push" || ds[2].Reason != "ping" {
		t.Fatalf("deliveries = %+v", ds)
	}
}

// TestStandardWebhooks: an hmac delivery within the window starts a task
// under the entry's auto posture; outside the window (by the injected
// clock) it is 401; the same webhook-id is a duplicate; a body over 1 MiB
// is 413 before it is verified.
func TestStandardWebhooks(t *testing.T) {
	f := start(t, nil, nil, buildHook())
	now := f.now.Load()
	body := []byte(`{"type":"build.failed","data":{"id":"b-42"},"posture":"yolo"}`)
	r := f.post(t, "build", standardHeaders("msg_1", now, body), body)
	if r.status != http.StatusAccepted {
		t.Fatalf("valid: %d %v", r.status, r.body)
	}
	task, err := f.svc.Task(t.Context(), fmt.Sprint(r.body["task_id"]))
	if err != nil || task.Posture != "auto" || !strings.Contains(task.Prompt, "build b-42 failed") {
		t.Fatalf("task = %+v, %v", task, err)
	}
	if d := f.post(t, "build", standardHeaders("msg_1", now, body), body); d.status != http.StatusOK || d.body["task_id"] != task.ID {
		t.Fatalf("same id: %d %v", d.status, d.body)
	}
	// Signed six minutes ago, by our clock.
	f.now.Store(now + int64((6 * time.Minute).Seconds()))
	if s := f.post(t, "build", standardHeaders("msg_2", now, body), body); s.status != http.StatusUnauthorized {
		t.Fatalf("stale: %d %v", s.status, s.body)
	}
	f.now.Store(now)
	big := bytes.Repeat([]byte("x"), 1<<20+1)
	if s := f.post(t, "build", standardHeaders("msg_3", now, big), big); s.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize: %d", s.status)
	}
	if n := len(f.tasks(t)); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

// TestTemplateFailure: a template that fails on a payload answers 422 with
// a safe message and stores no task.
func TestTemplateFailure(t *testing.T) {
	h := buildHook()
	h.Prompt = `{{index .data.items 5}}`
	f := start(t, nil, nil, h)
	body := []byte(`{"type":"x","data":{"items":[1]}}`)
	r := f.post(t, "build", standardHeaders("m", f.now.Load(), body), body)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(r.body["message"]), "prompt template failed") {
		t.Fatalf("%d %v", r.status, r.body)
	}
	if n := len(f.tasks(t)); n != 0 {
		t.Fatalf("%d tasks", n)
	}
}

// TestListWebhooks: GET /api/v1/webhooks needs the bearer token and shows
// each webhook with its recent deliveries, never a secret.
func TestListWebhooks(t *testing.T) {
	f := start(t, nil, nil, ciHook(), buildHook())
	body := checkRun("main", "x", "failure")
	f.post(t, "ci", githubHeaders("check_run", "d-1", body, ghSecret), body)
	res, err := f.srv.Client().Get(f.srv.URL + "/api/v1/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", res.StatusCode)
	}
	if _, err := f.st.RegisterBootstrapToken(t.Context(), store.BootstrapName, "tok"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/webhooks?recent=5", nil)
	req.Header.Set("Authorization", "Bearer tok")
	res, err = f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	if res.StatusCode != 200 || strings.Contains(buf.String(), ghSecret) || strings.Contains(buf.String(), hmacSecret) {
		t.Fatalf("%d %s", res.StatusCode, buf.String())
	}
	var out struct {
		Webhooks []struct {
			Name   string           `json:"name"`
			Kind   string           `json:"kind"`
			Recent []store.Delivery `json:"recent"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Webhooks) != 2 || out.Webhooks[0].Name != "ci" || len(out.Webhooks[0].Recent) != 1 ||
		out.Webhooks[0].Recent[0].Outcome != store.DeliveryAccepted || out.Webhooks[1].Kind != config.WebhookHMAC {
		t.Fatalf("%s", buf.String())
	}
}

// TestGitHubBodyLimit: GitHub's limit is 25 MiB, not the 1 MiB of other
// senders: a 2 MiB signed payload is read (and here filtered out), one
// byte over 25 MiB is 413 before its body is read or its signature checked.
func TestGitHubBodyLimit(t *testing.T) {
	f := start(t, nil, nil, ciHook())
	pad := strings.Repeat("x", 2<<20)
	body := []byte(`{"action":"completed","check_run":{"conclusion":"success"},"pad":"` + pad + `"}`)
	if r := f.post(t, "ci", githubHeaders("check_run", "big-1", body, ghSecret), body); r.status != http.StatusNoContent {
		t.Fatalf("2 MiB: %d %v", r.status, r.body)
	}
	huge := bytes.Repeat([]byte("x"), 25<<20+1)
	if r := f.post(t, "ci", githubHeaders("check_run", "big-2", huge, "unused"), huge); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("over 25 MiB: %d %v", r.status, r.body)
	}
	if ds := f.deliveries(t, "ci"); len(ds) != 2 || ds[0].Status != 413 || ds[1].Reason != "the payload does not match the filter" {
		t.Fatalf("deliveries = %+v", ds)
	}
}
