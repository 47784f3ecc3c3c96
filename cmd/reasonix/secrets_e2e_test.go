package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
)

// The service takes its secrets out of the environment the kernel shows
// (/proc/<pid>/environ, readable by every process of its user) right after
// start-up, and still uses every one: the admin token given as a file
// through ADMIN_TOKEN_FILE, the model key given as a plain variable, a
// secret-looking variable no key names.
func TestServeEnvironmentHoldsNoSecret(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"say hello": func(agenttest.Request) agenttest.Turn { return answer("hello") },
	})...)
	e.configure("\n[serve]\napi_token_env = \"ADMIN_TOKEN\"\n")
	const adminToken = "rx-admin-token-from-a-file-0123456789"
	tokenPath := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(tokenPath, []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// e.serve reads the token from the data dir; with api_token_env set the
	// service writes none, so put the one it must accept there.
	if err := os.WriteFile(filepath.Join(e.home, tokenFile), []byte(adminToken), 0o600); err != nil {
		t.Fatal(err)
	}
	s := e.serve(t, "ADMIN_TOKEN_FILE="+tokenPath, "GITHUB_TOKEN=ghp_unnamed_but_secret_value")

	environ, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatalf("reading the service's environ: %v", err)
	}
	for _, secret := range []string{"sk-secret-test-key", "FAKE_API_KEY", adminToken, tokenPath, "ghp_unnamed_but_secret_value"} {
		if strings.Contains(string(environ), secret) {
			t.Errorf("/proc/<serve>/environ still holds %q", secret)
		}
	}
	if !strings.Contains(string(environ), "REASONIX_HOME=") {
		t.Errorf("the ordinary variables are gone too: %q", environ)
	}

	// The token from the file opens the API; another does not.
	var list any
	if code := s.call("GET", "/api/v1/tasks", nil, &list); code != 200 {
		t.Fatalf("GET /api/v1/tasks with the token from ADMIN_TOKEN_FILE: %d", code)
	}
	s.token = "rx-wrong-token"
	if code := s.call("GET", "/api/v1/tasks", nil, nil); code != 401 {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	s.token = adminToken
	// The model key, gone from the environment, still reaches the model.
	id := s.submit("say hello", nil)
	if got := s.waitState(id, "succeeded", "failed", "blocked"); got.State != "succeeded" {
		t.Fatalf("task = %+v\n%s", got, s.events(id))
	}
	reqs := e.srv.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].APIKey != "sk-secret-test-key" {
		t.Fatalf("the model got key %q", reqs[len(reqs)-1].APIKey)
	}
}

// A command that prints the model key base64-encoded or reversed gets it
// masked all the same before the model sees the result.
func TestRunMasksEncodedSecretsInToolOutput(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("b1", "bash", `{"command":"base64 -w0 leak.txt"}`)),
		toolTurn(call("b2", "bash", `{"command":"rev leak.txt"}`)),
		answer("done"),
	)
	if err := os.WriteFile(filepath.Join(e.work, "leak.txt"), []byte("OPENAI_API_KEY=sk-secret-test-key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.run("run", "--auto", "show me the key")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte("OPENAI_API_KEY=sk-secret-test-key\n"))
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model saw %d requests", len(reqs))
	}
	var results []string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 {
		t.Fatalf("tool results: %q", results)
	}
	for _, r := range results {
		if !strings.Contains(r, "[redacted]") || strings.Contains(r, "yek-tset-terces-ks") ||
			strings.Contains(r, encoded[20:36]) {
			t.Errorf("an encoded key reached the model: %q", r)
		}
	}
}

// `reasonix run` takes its secrets out of its environment too: a command
// that reads its parent's /proc environ (possible without an OS sandbox,
// or for a root user) finds neither the model key nor a token.
func TestRunEnvironmentHoldsNoSecret(t *testing.T) {
	probe := `tr '\0' '\n' < /proc/$PPID/environ | grep -c -e FAKE_API_KEY -e GITHUB_TOKEN -e REASONIX_HOME`
	args, _ := json.Marshal(map[string]string{"command": probe})
	e := newE2E(t, toolTurn(call("c1", "bash", string(args))), answer("looked"))
	e.configure("[sandbox]\nbash = \"off\"\n")
	e.extra = append(e.extra, "GITHUB_TOKEN=ghp_planted_for_the_probe")
	stdout, stderr, code := e.run("run", "--posture", "yolo", "look")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// Only REASONIX_HOME, no secret, is left in the parent's environ.
	if got, _, _ := strings.Cut(strings.TrimSpace(lastToolResults(e.srv)), "\n"); got != "1" {
		t.Fatalf("variables matched in the parent's environ: %q, want 1 (REASONIX_HOME only)", got)
	}
}
