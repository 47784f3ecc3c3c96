package main

import (
	"fmt"
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

// TestConfigCheckPastAFileThatDoesNotLoad: a file that does not parse,
// or holds keys of the wrong type, no longer ends config check and doctor
// at its first problem: each problem the decoder can tell apart is
// reported with its line (and column, for a syntax error), and every
// check that needs no file — the environment, the paths, the binaries —
// still runs and reports; both exit non-zero.
func TestConfigCheckPastAFileThatDoesNotLoad(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		env        map[string]string
		want       []string // in config check's errors and doctor's FAIL lines
		ran        []string // file-free checks that passed, in config check's output
	}{
		{name: "syntax", file: "[agent]\nmax_steps = = 3\n",
			want: []string{`line 2, column 13: key "agent.max_steps": expected value but found '=' instead`}, ran: []string{"git: found", "environment: "}},
		{name: "types", file: "[agent]\nmax_steps = \"many\"\neffort = \"high\"\n[runner]\nmax_concurrent_tasks = \"four\"\n[[workspaces]]\nname = 7\n",
			want: []string{`line 2: key "agent.max_steps": incompatible types`, `line 5: key "runner.max_concurrent_tasks": incompatible types`,
				`line 7: key "workspaces.name": incompatible types`}, ran: []string{"git: found", "home: "}},
		{name: "environment", file: "[agent\n", env: map[string]string{"REASONIX_ADDR": "not an address"},
			want: []string{"to end table name", `$REASONIX_ADDR: serve.addr: "not an address" is not host:port`}, ran: []string{"git: found"}},
		{name: "data dir", file: "x = = 1\n", env: map[string]string{"REASONIX_DATA_DIR": notADir},
			want: []string{"line 1, column 5", "data dir: " + notADir + ": " + notADir + " is not a directory"}, ran: []string{"git: found"}},
		{name: "no git", file: "x = = 1\n", env: map[string]string{"PATH": t.TempDir()},
			want: []string{"line 1, column 5", "git: git is not on PATH"}, ran: []string{"environment: "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			for k, v := range map[string]string{"REASONIX_HOME": home, "HOME": home, "REASONIX_ADDR": "", "REASONIX_DATA_DIR": "",
				"REASONIX_STORE_DSN": "", "REASONIX_CONFIG": ""} {
				t.Setenv(k, v)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			file := filepath.Join(t.TempDir(), "reasonix.toml")
			if err := os.WriteFile(file, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := cliRun("config", "check", "--config", file)
			if code != exitUsage {
				t.Errorf("config check exit %d, want %d", code, exitUsage)
			}
			for _, want := range c.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("config check does not report %q:\n%s", want, stderr)
				}
			}
			if n := strings.Count(stderr, "reasonix: "); len(c.want) > 1 && !strings.Contains(stderr, fmt.Sprintf("%d problems", n-1)) {
				t.Errorf("config check does not count its problems:\n%s", stderr)
			}
			for _, ran := range c.ran {
				if !strings.Contains(out, "\n"+ran) {
					t.Errorf("config check did not run the %q check:\n%s", ran, out)
				}
			}
			dout, _, dcode := cliRun("doctor", "--config", file)
			if dcode == exitOK {
				t.Error("doctor passes a file that does not load")
			}
			for _, want := range c.want {
				want = strings.TrimPrefix(strings.TrimPrefix(want, "data dir: "), "git: ")
				i := strings.Index(dout, want)
				if i < 0 || !strings.Contains(dout[strings.LastIndex(dout[:i], "\n")+1:i], "FAIL") {
					t.Errorf("doctor does not fail on %q:\n%s", want, dout)
				}
			}
			if !strings.Contains(dout, "sandbox") || !strings.Contains(dout, "data dir") {
				t.Errorf("doctor skipped the checks that need no file:\n%s", dout)
			}
		})
	}
}
