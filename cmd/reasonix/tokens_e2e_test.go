package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
)

// callAs sends an API request with another token and returns the status
// and the body.
func (s *service) callAs(secret, method, path, body string) (int, string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestTokensOnTheBinary: an installation's existing token file becomes the
// admin principal; `tokens create` prints a secret once and stores only
// its hash; a submit token cannot approve or start a yolo task; `tokens
// revoke` takes effect on the next request.
func TestTokensOnTheBinary(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"needs approval": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + res)
			}
			return toolTurn(call("a1", "bash", `{"command":"echo ok > ok.txt && cat ok.txt"}`))
		},
	})...)
	// A token file from before tokens were principals: 64 hex characters.
	old := strings.Repeat("0123456789abcdef", 4)
	if err := os.WriteFile(filepath.Join(e.home, tokenFile), []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := e.serve(t)
	if s.token != old {
		t.Fatalf("serve replaced the existing token file")
	}
	admin := s.submit("this needs approval", nil)
	if got := s.task(admin); got.Requester != "token:admin" {
		t.Fatalf("the first token's task = %+v; want requester token:admin", got)
	}
	s.waitState(admin, "waiting_approval")

	secret, stderr, code := e.run("tokens", "create", "ci", "--role", "submit")
	secret = strings.TrimSpace(secret)
	if code != 0 || !strings.HasPrefix(secret, "rxt_") || !strings.Contains(stderr, "token:ci") {
		t.Fatalf("tokens create: %d %q %s", code, secret, stderr)
	}
	if _, stderr, code := e.run("tokens", "create", "ci", "--role", "submit"); code != exitUsage || !strings.Contains(stderr, "exists already") {
		t.Errorf("a second ci: %d %s", code, stderr)
	}
	if _, stderr, code := e.run("tokens", "create", "x", "--role", "root"); code != exitUsage || !strings.Contains(stderr, "submit, approve, grant or admin") {
		t.Errorf("--role root: %d %s", code, stderr)
	}
	list, _, code := e.run("tokens", "list")
	if code != 0 || !strings.Contains(list, "admin") || !strings.Contains(list, "ci") || strings.Contains(list, secret) || strings.Contains(list, old) {
		t.Errorf("tokens list: %d\n%s", code, list)
	}
	out, _, code := e.run("tokens", "list", "--json")
	var toks []struct {
		Name, ID, Role string
		RevokedAt      *time.Time `json:"revoked_at"`
	}
	if err := json.Unmarshal([]byte(out), &toks); code != 0 || err != nil || len(toks) < 2 || strings.Contains(out, secret) {
		t.Errorf("tokens list --json: %d %v\n%s", code, err, out)
	}
	for _, tk := range toks {
		if tk.Name == "ci" && (tk.Role != "submit" || !strings.HasPrefix(tk.ID, "tok_") || tk.RevokedAt != nil) {
			t.Errorf("tokens list --json: ci is %+v", tk)
		}
	}
	db, err := os.ReadFile(filepath.Join(e.home, "reasonix.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(e.home, "reasonix.db-wal"))
	if bytes.Contains(db, []byte(secret)) || bytes.Contains(wal, []byte(secret)) || bytes.Contains(db, []byte(old)) || bytes.Contains(wal, []byte(old)) {
		t.Error("a token secret is stored in the database")
	}

	aps := s.pending(admin)
	if len(aps) != 1 {
		t.Fatalf("pending = %+v", aps)
	}
	if st, body := s.callAs(secret, "POST", "/api/v1/approvals/"+aps[0].ID, `{"decision":"allow_once"}`); st != 403 {
		t.Errorf("the submit token approving = %d %s", st, body)
	}
	if st, body := s.callAs(secret, "POST", "/api/v1/tasks", `{"prompt":"this needs approval","posture":"yolo"}`); st != 403 || !strings.Contains(body, "limit (auto)") {
		t.Errorf("a yolo task from the submit token = %d %s", st, body)
	}
	if st, body := s.callAs(secret, "POST", "/api/v1/tasks/"+admin+"/cancel", ""); st != 403 {
		t.Errorf("the submit token cancelling the admin's task = %d %s", st, body)
	}
	if st, _ := s.callAs(secret, "GET", "/api/v1/tasks", ""); st != 200 {
		t.Errorf("the submit token reading = %d", st)
	}
	if out, stderr, code := e.run("tokens", "revoke", "ci"); code != 0 || !strings.Contains(out, "revoked token:ci") {
		t.Fatalf("tokens revoke: %d %s %s", code, out, stderr)
	}
	if st, _ := s.callAs(secret, "GET", "/api/v1/tasks", ""); st != 401 {
		t.Errorf("the revoked token = %d, want 401", st)
	}
	if _, stderr, code := e.run("tokens", "revoke", "nobody"); code == 0 || !strings.Contains(stderr, "not found") {
		t.Errorf("revoke nobody: %d %s", code, stderr)
	}
	// The admin (the token file) still decides, its own task included.
	var decided approval
	if code := s.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, &decided); code != 200 || decided.DecidedBy != "token:admin" {
		t.Fatalf("the admin deciding = %d %+v", code, decided)
	}
	if got := s.waitState(admin, "succeeded", "failed", "blocked"); got.State != "succeeded" {
		t.Errorf("after approval: %+v", got)
	}
}
