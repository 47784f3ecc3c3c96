package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckListsEveryProblem: for each thing serve refuses to start
// on, config check, doctor and serve itself report it, all of them in one
// go (it used to be one key per restart: the first missing chat token,
// and nothing past a missing model).
func TestConfigCheckListsEveryProblem(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{"REASONIX_HOME": home, "HOME": home, "REASONIX_ADDR": "", "REASONIX_DATA_DIR": "",
		"REASONIX_STORE_DSN": "", "REASONIX_CONFIG": ""} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"RXA_SLACK_BOT", "RXA_SLACK_APP", "RXA_TG", "RXA_HOOK"} {
		os.Unsetenv(k)
	}
	file := filepath.Join(t.TempDir(), "reasonix.toml")
	if err := os.WriteFile(file, []byte(`
[bot.slack]
enabled = true
allow_users = ["*"]
allow_channels = ["C1"]
bot_token_env = "RXA_SLACK_BOT"
app_token_env = "RXA_SLACK_APP"
[bot.telegram]
enabled = true
allow_users = ["*"]
allow_chats = ["-1"]
token_env = "RXA_TG"
[[webhooks]]
name = "ci"
kind = "github"
secret_env = "RXA_HOOK"
prompt = "fix {{"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRefuses := []string{
		"webhooks[ci].secret_env: $RXA_HOOK is not set",
		"webhooks[ci].prompt: does not parse",
		"bot.slack.bot_token_env names $RXA_SLACK_BOT, which is not set",
		"bot.slack.app_token_env names $RXA_SLACK_APP, which is not set",
		"bot.telegram.token_env names $RXA_TG, which is not set",
	}
	_, stderr, code := cliRun("config", "check", "--config", file)
	if code != exitUsage {
		t.Errorf("config check exit %d, want %d", code, exitUsage)
	}
	for _, want := range append(serveRefuses, "no model is configured", "6 problems in the configuration") {
		if !strings.Contains(stderr, "reasonix: "+want) {
			t.Errorf("config check does not report %q:\n%s", want, stderr)
		}
	}
	out, _, _ := cliRun("doctor", "--config", file)
	for _, want := range serveRefuses {
		if !strings.Contains(out, want) || !strings.Contains(out[:strings.Index(out, want)], "FAIL") {
			t.Errorf("doctor does not fail on %q:\n%s", want, out)
		}
	}
	_, err := loadCheckedServiceConfig(file)
	got := problemsOf(err)
	if len(got) != len(serveRefuses) {
		t.Fatalf("serve refuses with %d problems, want %d: %q", len(got), len(serveRefuses), got)
	}
	for i, want := range serveRefuses {
		if !strings.Contains(got[i], strings.TrimPrefix(want, "reasonix: ")) {
			t.Errorf("serve's problem %d = %q, want %q", i, got[i], want)
		}
	}
}
