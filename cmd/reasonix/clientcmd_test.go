package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAPI is a service API with canned answers, for the client commands.
type fakeAPI struct {
	*httptest.Server
	mu        sync.Mutex
	approvals []map[string]any
	decisions []map[string]string
	events    []map[string]any
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	mux := http.NewServeMux()
	notFound := func(w http.ResponseWriter, what string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"code":"not_found","message":"store: %s: store: not found"}`, what)
	}
	mux.HandleFunc("GET /api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"tasks":[]}`)
	})
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "t_1" {
			notFound(w, "task "+r.PathValue("id"))
			return
		}
		io.WriteString(w, `{"id":"t_1","state":"succeeded","source":"cli","result":{"final_answer":"all done"}}`)
	})
	mux.HandleFunc("GET /api/v1/tasks/{id}/events/stream", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "t_1" {
			notFound(w, "task "+r.PathValue("id"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, ev := range f.events {
			payload, _ := json.Marshal(ev["payload"])
			fmt.Fprintf(w, "data: {\"seq\":%d,\"type\":%q,\"payload\":%s}\n\n", i+1, ev["type"], payload)
		}
	})
	mux.HandleFunc("GET /api/v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var list []map[string]any
		for _, a := range f.approvals {
			if s := r.URL.Query().Get("state"); s == "" || a["state"] == s {
				list = append(list, a)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"approvals": list})
	})
	mux.HandleFunc("POST /api/v1/approvals/{id}", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.decisions = append(f.decisions, body)
		f.mu.Unlock()
		if r.PathValue("id") != "a_1" {
			notFound(w, "approval "+r.PathValue("id"))
			return
		}
		fmt.Fprintf(w, `{"id":"a_1","task_id":"t_1","decision":%q,"decided_by":"token:erin"}`, body["decision"])
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	// The client reads the service config for its defaults: keep it empty.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_API_TOKEN", "tok")
	t.Setenv("NO_COLOR", "")
	return f
}

const editPreview = "--- main.go\n+++ main.go\n@@\n-old line\n+new line\n"

func TestEmptyListsSaySo(t *testing.T) {
	api := newFakeAPI(t)
	for args, want := range map[string]string{
		"tasks list":           "no tasks\n",
		"approvals list":       "no approvals waiting\n",
		"approvals list --all": "no approvals\n",
	} {
		out, stderr, code := cliRun(append(strings.Fields(args), "--server", api.URL)...)
		if code != exitOK || out != want {
			t.Errorf("%s: exit %d, stdout %q (want %q), stderr %q", args, code, out, want, stderr)
		}
	}
}

func TestNotFoundNamesTheThing(t *testing.T) {
	api := newFakeAPI(t)
	for _, args := range [][]string{{"tasks", "show", "t_nope"}, {"tasks", "cancel", "t_nope"}, {"tasks", "watch", "t_nope"}} {
		_, stderr, code := cliRun(append(args, "--server", api.URL)...)
		if code != exitFailed || stderr != "reasonix: task t_nope not found\n" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	_, stderr, code := cliRun("approvals", "show", "a_nope", "--server", api.URL)
	if code != exitFailed || stderr != "reasonix: approval a_nope not found\n" {
		t.Errorf("approvals show a_nope: exit %d, stderr %q", code, stderr)
	}
}

func TestApprovalsShowPrintsThePreview(t *testing.T) {
	api := newFakeAPI(t)
	api.approvals = []map[string]any{
		{"id": "a_2", "task_id": "t_1", "tool": "bash", "subject": "go test ./...", "preview": "go test ./...", "state": "allowed", "decision": "allow_once", "decided_by": "erin"},
		{"id": "a_1", "task_id": "t_1", "tool": "edit_file", "subject": "main.go", "preview": editPreview, "state": "pending", "scopes": []string{"Edit(main.go)"}},
	}
	out, stderr, code := cliRun("approvals", "show", "a_1", "--server", api.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"approval  a_1\n", "tool      edit_file\n", "scopes    Edit(main.go)\n", "-old line\n+new line\n", "reasonix approvals allow a_1"} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour written to a non-terminal:\n%q", out)
	}
	out, _, code = cliRun("approvals", "show", "a_2", "--server", api.URL)
	if code != exitOK || !strings.Contains(out, "allowed (allow_once by erin)") || !strings.Contains(out, "\ngo test ./...\n") {
		t.Errorf("a decided approval: exit %d\n%s", code, out)
	}
}

// TestDecidingNamesNobody: the approver is the token's principal, which
// the service records; the CLI sends no name, and --as is gone.
func TestDecidingNamesNobody(t *testing.T) {
	api := newFakeAPI(t)
	t.Setenv("USER", "")
	out, stderr, code := cliRun("approvals", "deny", "--note", "no", "a_1", "--server", api.URL)
	if code != exitOK || !strings.Contains(out, "deny by token:erin") {
		t.Errorf("deny: exit %d\n%s%s", code, out, stderr)
	}
	if len(api.decisions) != 1 || api.decisions[0]["note"] != "no" {
		t.Fatalf("decisions = %v", api.decisions)
	}
	if _, ok := api.decisions[0]["approver"]; ok {
		t.Errorf("the CLI named an approver: %v", api.decisions[0])
	}
	if _, stderr, code := cliRun("approvals", "allow", "--as", "ci-bot", "a_1", "--server", api.URL); code != exitUsage || !strings.Contains(stderr, "--as") {
		t.Errorf("allow --as: exit %d, stderr %q", code, stderr)
	}
}

func TestWatchPrintsTheApprovalPreview(t *testing.T) {
	api := newFakeAPI(t)
	api.events = []map[string]any{
		{"type": "task_state", "payload": map[string]any{"state": "running"}},
		{"type": "tool_started", "payload": map[string]any{"tool": "edit_file", "args": `{"path":"main.go"}`}},
		{"type": "approval_requested", "payload": map[string]any{"approval_id": "a_1", "tool": "edit_file", "subject": "main.go", "preview": editPreview}},
		{"type": "approval_decided", "payload": map[string]any{"decision": "allow_once", "approver": "erin"}},
		{"type": "task_state", "payload": map[string]any{"state": "succeeded"}},
	}
	out, stderr, code := cliRun("tasks", "watch", "t_1", "--server", api.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "state: running\n· edit_file main.go\n? approval a_1: edit_file main.go\n    --- main.go\n    +++ main.go\n    @@\n    -old line\n    +new line\n" +
		"  decide: reasonix approvals allow a_1   or   reasonix approvals deny a_1 --note WHY\n  allow_once by erin\nstate: succeeded\n"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "all done") {
		t.Errorf("watch output:\n%s\nwant it to start with:\n%s", out, want)
	}
	if strings.Contains(out, "\r") || strings.Contains(out, "\x1b[") {
		t.Errorf("a status line or colour was written to a non-terminal:\n%q", out)
	}
}

// TestDenyPublishAnswersABudgetCard: `approvals deny --publish` sends a
// budget card's "Stop and publish what exists".
func TestDenyPublishAnswersABudgetCard(t *testing.T) {
	api := newFakeAPI(t)
	out, stderr, code := cliRun("approvals", "deny", "--publish", "a_1", "--server", api.URL)
	if code != exitOK || !strings.Contains(out, "stop_publish by token:erin") {
		t.Errorf("deny --publish: exit %d\n%s%s", code, out, stderr)
	}
	if len(api.decisions) != 1 || api.decisions[0]["decision"] != "stop_publish" {
		t.Fatalf("decisions = %v", api.decisions)
	}
}
