package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
)

const hookConfig = `
[[webhooks]]
name = "ci"
kind = "github"
secret_env = "CI_HOOK_SECRET"
events = ["check_run.completed"]
filter = 'check_run.conclusion == "failure"'
prompt = "CI failed on {{.check_run.head_branch}}"
`

// TestServeRefusesUnusableWebhooks: a webhook whose secret variable is
// unset or empty, or whose template does not parse, keeps serve from
// starting: exit 2, naming the key.
func TestServeRefusesUnusableWebhooks(t *testing.T) {
	for _, tc := range []struct {
		name, config, env, want string
	}{
		{"secret unset", hookConfig, "", `webhooks[ci].secret_env: $CI_HOOK_SECRET is not set or empty`},
		{"secret empty", hookConfig, "CI_HOOK_SECRET=", `webhooks[ci].secret_env: $CI_HOOK_SECRET is not set or empty`},
		{"template", strings.Replace(hookConfig, "{{.check_run.head_branch}}", "{{.check_run", 1), "CI_HOOK_SECRET=s", `webhooks[ci].prompt: does not parse`},
		{"filter", strings.Replace(hookConfig, `== "failure"`, `= "failure"`, 1), "CI_HOOK_SECRET=s", `webhooks[ci].filter:`},
		{"yolo", hookConfig + "posture = \"yolo\"\n", "CI_HOOK_SECRET=s", `webhooks[ci].posture: yolo is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			e.configure(tc.config)
			cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0")
			cmd.Dir = e.work
			cmd.Env = baseEnv(e.home)
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("serve started with an unusable webhook:\n%s", out.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, want %d and %q:\n%s", code, exitUsage, tc.want, out.String())
			}
		})
	}
}

// TestServeWebhookDelivery: a signed delivery to the built binary starts a
// task without a bearer token, a forged one is refused, `reasonix webhooks
// list` shows both, and the secret never reaches the log.
func TestServeWebhookDelivery(t *testing.T) {
	const secret = "e2e-webhook-secret-value"
	e := newE2E(t, agenttest.Turn{Text: "looked at it"})
	e.configure(hookConfig + `
[[webhooks]]
name = "deps"
kind = "hmac"
secret_env = "CI_HOOK_SECRET"
prompt = "update the dependencies"
goal = true
budget_usd = 1.25
`)
	e.extra = append(e.extra, "CI_HOOK_SECRET="+secret)
	s := e.serve(t, "CI_HOOK_SECRET="+secret)

	body := []byte(`{"action":"completed","check_run":{"conclusion":"failure","head_branch":"main"}}`)
	post := func(sig string) int {
		req, _ := http.NewRequest("POST", s.url+"/hooks/ci", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "check_run")
		req.Header.Set("X-GitHub-Delivery", "e2e-1")
		req.Header.Set("X-Hub-Signature-256", sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if code := post("sha256=" + strings.Repeat("0", 64)); code != http.StatusUnauthorized {
		t.Fatalf("forged: %d", code)
	}
	if code := post("sha256=" + hex.EncodeToString(m.Sum(nil))); code != http.StatusAccepted {
		t.Fatalf("signed: %d\n%s", code, s.stderr.String())
	}
	out, errOut, code := e.run("webhooks", "list")
	if code != 0 || !strings.Contains(out, "/hooks/ci") || !regexp.MustCompile(`accepted +202`).MatchString(out) ||
		!regexp.MustCompile(`rejected +401`).MatchString(out) || !strings.Contains(out, "the signature does not match") ||
		!strings.Contains(out, "deps  hmac  POST /hooks/deps  events (all)  posture ask  goal (budget $1.25)") {
		t.Fatalf("webhooks list (exit %d):\n%s%s", code, out, errOut)
	}
	t.Logf("webhooks list:\n%s", out)
	if strings.Contains(s.stderr.String(), secret) || strings.Contains(out, secret) {
		t.Fatal("the webhook secret was printed")
	}
}

// TestConfigCheckWebhooks: config check makes serve's webhook checks.
func TestConfigCheckWebhooks(t *testing.T) {
	e := newE2E(t)
	e.configure(hookConfig)
	if _, errOut, code := e.run("config", "check"); code != exitUsage || !strings.Contains(errOut, "webhooks[ci].secret_env") {
		t.Fatalf("without the secret: exit %d\n%s", code, errOut)
	}
	e.extra = append(e.extra, "CI_HOOK_SECRET=s")
	if out, errOut, code := e.run("config", "check"); code != 0 || !strings.Contains(out, "webhook ci: POST /hooks/ci (github, posture ask)") {
		t.Fatalf("with the secret: exit %d\n%s%s", code, out, errOut)
	}
}
