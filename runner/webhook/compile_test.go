package webhook_test

import (
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/runner/webhook"
)

// TestCompileReportsEveryProblem: each unusable part of each entry is
// reported, naming its key; a usable set exposes its secrets for masking.
func TestCompileReportsEveryProblem(t *testing.T) {
	bad := ciHook()
	bad.SecretsEnv = []string{"UNSET_ROTATION"}
	bad.Prompt = "{{.x"
	bad.Filter = "a = 1"
	b := buildHook()
	b.SecretEnv = "BAD_WHSEC"
	_, err := webhook.Compile([]config.Webhook{bad, b}, func(k string) (string, bool) {
		if k == "BAD_WHSEC" {
			return "whsec_%%%", true
		}
		return lookupEnv(k)
	})
	if err == nil {
		t.Fatal("compiled")
	}
	for _, want := range []string{"webhooks[ci].secrets_env: $UNSET_ROTATION is not set", "webhooks[ci].prompt: does not parse",
		"webhooks[ci].filter: filter: at byte 2", "webhooks[build].secret_env: $BAD_WHSEC: a secret starting with \"whsec_\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "%%%") {
		t.Errorf("a secret value is in the error: %v", err)
	}
	hs, err := webhook.Compile([]config.Webhook{ciHook(), buildHook()}, lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s := hs.Secrets(); len(s) != 2 || s[0] != ghSecret || s[1] != hmacSecret {
		t.Fatalf("secrets = %q", s)
	}
}
