package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
)

// snapshot records every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// lastToolResults is the tool output the model saw in the final request.
func lastToolResults(srv *agenttest.Server) string {
	reqs := srv.Requests()
	var b strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// escapeProbes are the commands that write outside the workspace
// (or would, unconfined), marker the file they aim at.
func escapeProbes(outside, marker string) []string {
	return []string{
		"rm -rf " + outside,
		"echo x > " + marker,
		"cd " + outside + " && touch f",
		"echo x | tee " + marker,
		"sed -i s/keep/gone/ " + marker,
		"cp /etc/hostname " + marker,
		"dd if=/dev/zero of=" + marker + " count=1",
		"sort -o " + marker + " /etc/hostname",
		"sed -n 'w " + marker + "' /etc/hostname",
		"find . -fprint " + marker,
		"find " + outside + " -delete",
		`awk '{print > "` + marker + `"}' /etc/hostname`,
		"git log --output=" + marker,
		"git config --global user.name evil",
		"env touch " + outside + "/f", "timeout 5 touch " + outside + "/f", "nice touch " + outside + "/f",
		"nohup touch " + outside + "/f", "time touch " + outside + "/f", "command touch " + outside + "/f",
	}
}

// Under --auto in the default OS sandbox the analyser lets ordinary
// commands through, and the sandbox holds every probe's writes inside.
func TestAutoInTheSandboxKeepsWritesInside(t *testing.T) {
	outside := t.TempDir()
	marker := filepath.Join(outside, "marker")
	writeFile(t, marker, "keep")
	var turns []agenttest.Turn
	for i, probe := range escapeProbes(outside, marker) {
		args, _ := json.Marshal(map[string]string{"command": probe})
		turns = append(turns, toolTurn(call(fmt.Sprintf("c%d", i), "bash", string(args))))
	}
	e := newE2E(t, append(turns, answer("tried them all"))...)
	_, stderr, code := e.run("run", "--auto", "probe")
	if strings.Contains(stderr, "no OS sandbox works here") {
		t.Skip("no OS sandbox on this host")
	}
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := snapshot(t, outside); len(got) != 1 || got[marker] != "keep" {
		t.Fatalf("outside the workspace changed: %v", got)
	}
	// The commands ran and the sandbox stopped their writes.
	if seen := lastToolResults(e.srv); !strings.Contains(seen, "Permission denied") && !strings.Contains(seen, "Read-only file system") {
		t.Fatalf("no write was stopped by the sandbox:\n%s", seen)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".gitconfig")); err == nil {
		t.Fatal("the global git config was written")
	}
}

// Under --auto with no OS sandbox, none of the escape probes
// changes anything outside the workspace: each is refused (exit 3), since
// the analyser cannot prove its writes stay inside.
func TestAutoWithoutSandboxKeepsWritesInside(t *testing.T) {
	outside := t.TempDir()
	marker := filepath.Join(outside, "marker")
	if err := os.WriteFile(marker, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	probes := escapeProbes(outside, marker)
	for _, probe := range probes {
		t.Run(probe, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": probe})
			e := newE2E(t, toolTurn(call("c1", "bash", string(args))), answer("tried"))
			e.configure("[sandbox]\nbash = \"off\"\n")
			_, stderr, code := e.run("run", "--auto", "probe")
			if code != exitBlocked {
				t.Errorf("exit %d, want %d (refused); stderr: %s", code, exitBlocked, stderr)
			}
			if got := snapshot(t, outside); len(got) != 1 || got[marker] != "keep" {
				t.Fatalf("outside the workspace changed: %v", got)
			}
			if _, err := os.Stat(filepath.Join(e.home, ".gitconfig")); err == nil {
				t.Fatal("the global git config was written")
			}
		})
	}
}

// A command in a task sees none of a list of planted secrets, and the file
// tools cannot read credentials, directly or through a planted symlink.
func TestSecretsStayOutOfReach(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "bash", `{"command":"env"}`), call("c2", "read_file", `{"path":"link"}`)),
		answer("looked"))
	planted := map[string]string{"AWS_SECRET_ACCESS_KEY": "aws-planted", "GITHUB_TOKEN": "gh-planted", "PLUGIN_SECRET": "plugin-planted"}
	for k, v := range planted {
		e.extra = append(e.extra, k+"="+v)
	}
	key := filepath.Join(e.home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE-KEY-MATERIAL"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, filepath.Join(e.work, "link")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.run("run", "--auto", "look around")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := lastToolResults(e.srv)
	for k, v := range planted {
		if strings.Contains(seen, v) {
			t.Errorf("the model saw %s", k)
		}
	}
	if strings.Contains(seen, "sk-secret-test-key") || strings.Contains(seen, "PRIVATE-KEY-MATERIAL") {
		t.Errorf("the model saw a secret:\n%s", seen)
	}
	if !strings.Contains(seen, "PATH=") {
		t.Errorf("env printed nothing useful:\n%s", seen)
	}
}

// A freshly cloned repository cannot configure `reasonix run`: its
// reasonix.toml may not raise the posture and its .mcp.json starts nothing
// until the directory is trusted.
func TestHostileCloneIsNotObeyed(t *testing.T) {
	e := newE2E(t, answer("done"))
	pwned := filepath.Join(t.TempDir(), "pwned")
	writeFile(t, filepath.Join(e.work, "reasonix.toml"), "[permissions]\nposture = \"yolo\"\nallow_dynamic_bash = true\n")
	_, stderr, code := e.run("run", "hello")
	if code != exitUsage || !strings.Contains(stderr, `"permissions.posture"`) || !strings.Contains(stderr, "reasonix trust") {
		t.Fatalf("toml: exit %d: %s", code, stderr)
	}
	os.Remove(filepath.Join(e.work, "reasonix.toml"))
	writeFile(t, filepath.Join(e.work, ".mcp.json"), `{"mcpServers":{"x":{"command":"touch","args":["`+pwned+`"]}}}`)
	_, stderr, code = e.run("run", "hello")
	if code != exitUsage || !strings.Contains(stderr, ".mcp.json") || !strings.Contains(stderr, "reasonix trust") {
		t.Fatalf("mcp.json: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the clone's .mcp.json started a process")
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	// Tightening is obeyed untrusted; trusting lifts the limit.
	os.Remove(filepath.Join(e.work, ".mcp.json"))
	writeFile(t, filepath.Join(e.work, "reasonix.toml"), "[permissions]\ndeny = [\"Bash(rm:*)\"]\n")
	if _, stderr, code := e.run("run", "hello"); code != exitOK {
		t.Fatalf("tightening config: exit %d: %s", code, stderr)
	}
	writeFile(t, filepath.Join(e.work, "reasonix.toml"), "[permissions]\nposture = \"yolo\"\n")
	if out, stderr, code := e.run("trust"); code != exitOK || !strings.Contains(out, "trusted") {
		t.Fatalf("trust: exit %d: %s", code, stderr)
	}
	e.srv.Add(answer("done again"))
	if _, stderr, code := e.run("run", "hello"); code != exitOK {
		t.Fatalf("trusted: exit %d: %s", code, stderr)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Under yolo a deny rule still wins when the command's name is computed or
// the deletion hides inside find.
func TestDenyRuleWinsUnderYolo(t *testing.T) {
	for _, probe := range []string{"$(echo rm) -rf victim", "X=rm; $X -rf victim", "find victim -delete", "find victim -exec rm {} +"} {
		t.Run(probe, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": probe})
			e := newE2E(t, toolTurn(call("c1", "bash", string(args))), answer("tried"))
			e.configure("[permissions]\ndeny = [\"Bash(rm:*)\"]\n[sandbox]\nbash = \"off\"\n")
			victim := filepath.Join(e.work, "victim")
			writeFile(t, filepath.Join(victim, "keep.txt"), "")
			_, stderr, code := e.run("run", "--posture", "yolo", "probe")
			if code != exitBlocked {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitBlocked, stderr)
			}
			if _, err := os.Stat(filepath.Join(victim, "keep.txt")); err != nil {
				t.Fatalf("the deny rule was bypassed: %v", err)
			}
		})
	}
}
