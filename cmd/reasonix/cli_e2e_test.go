package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitWritesAConfigThatPassesCheck(t *testing.T) {
	e := newE2E(t)
	e.work = filepath.Join(gitRepo(t), "sub")
	if err := os.Mkdir(e.work, 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.run("init", "--provider", "local", "--base-url", e.srv.URL, "--model", "fake-model", "--key-env", "FAKE_API_KEY")
	if code != exitOK || !strings.Contains(out, "wrote ./reasonix.toml") || !strings.Contains(out, "export FAKE_API_KEY=") {
		t.Fatalf("init: exit %d\n%s%s", code, out, stderr)
	}
	data, err := os.ReadFile(filepath.Join(e.work, "reasonix.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`default_model = "local"`, `api_key_env = "FAKE_API_KEY"`, "[[workspaces]]", `repo = ".."`, `base = "main"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("reasonix.toml lacks %q:\n%s", want, data)
		}
	}
	out, stderr, code = e.run("config", "check")
	if code != exitOK || !strings.Contains(out, "model local/fake-model") || !strings.Contains(out, "workspace ") {
		t.Errorf("config check of the written file: exit %d\n%s%s", code, out, stderr)
	}

	if err := os.WriteFile(filepath.Join(e.work, "reasonix.toml"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = e.run("init")
	if code != exitFailed || !strings.Contains(stderr, "already exists; pass --force") {
		t.Errorf("init over an existing file: exit %d\n%s", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "reasonix.toml")); string(data) != "# mine\n" {
		t.Errorf("init changed an existing file:\n%s", data)
	}
	if out, stderr, code = e.run("init", "--force", "--key-env", ""); code != exitOK || strings.Contains(out, "export") {
		t.Errorf("init --force without a key variable: exit %d\n%s%s", code, out, stderr)
	}

	e.work = t.TempDir() // not a repository: a provider, no workspace
	out, _, code = e.run("init")
	if code != exitOK || !strings.Contains(out, "no workspace: this is not a git repository") || !strings.Contains(out, "export DEEPSEEK_API_KEY=") {
		t.Errorf("init outside a repository: exit %d\n%s", code, out)
	}
}

func TestEveryEntryPointChecksWorkspaces(t *testing.T) {
	e := newE2E(t)
	repo := gitRepo(t)
	ghost := filepath.Join(t.TempDir(), "ghost")
	e.configure(`
[[workspaces]]
name = "app"
repo = "` + repo + `"

[[workspaces]]
name = "ghost"
repo = "` + ghost + `"

[[workspaces]]
name = "wrongbase"
repo = "` + repo + `"
base = "release"
`)
	out, stderr, code := e.run("config", "check")
	if code != exitUsage || !strings.Contains(out, "workspace app: ") ||
		!strings.Contains(stderr, `workspace "ghost": repo `+ghost+" does not exist") ||
		!strings.Contains(stderr, `workspace "wrongbase": base "release" is not a branch`) {
		t.Errorf("config check: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = e.run("doctor")
	if code != exitFailed || !strings.Contains(out, "ok    workspace    app: ") || !strings.Contains(out, `FAIL  workspace    workspace "ghost"`) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	_, stderr, code = e.run("serve", "--addr", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(stderr, `workspace "ghost": repo`) {
		t.Errorf("serve with an unusable workspace: exit %d\n%s", code, stderr)
	}
}

func TestRunPermissionModeIsADeprecatedPosture(t *testing.T) {
	e := newE2E(t, toolTurn(call("c1", "write_file", `{"path":"x.txt","content":"x"}`)), answer("wrote x.txt"))
	_, stderr, code := e.run("run", "--permission-mode", "auto", "create x.txt")
	if code != exitOK || !strings.Contains(stderr, "reasonix: --permission-mode is deprecated; use --posture") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err != nil {
		t.Errorf("--permission-mode auto did not allow the write: %v", err)
	}
}

func TestRunPostureFlag(t *testing.T) {
	e := newE2E(t, toolTurn(call("c1", "write_file", `{"path":"x.txt","content":"x"}`)), answer("wrote x.txt"))
	_, stderr, code := e.run("run", "--posture", "auto", "create x.txt")
	if code != exitOK || strings.Contains(stderr, "deprecated") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err != nil {
		t.Errorf("--posture auto did not allow the write: %v", err)
	}
}
