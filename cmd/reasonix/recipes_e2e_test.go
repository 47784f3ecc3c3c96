package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `run /review pkg/foo` sends the command's rendered body; the project's
// command wins over the user's of the same name.
func TestRunSlashCommand(t *testing.T) {
	e := newE2E(t, answer("reviewed"))
	writeFile(t, filepath.Join(e.home, "commands", "review.md"), "user review")
	writeFile(t, filepath.Join(e.work, ".reasonix", "commands", "review.md"), "---\ndescription: Review\n---\nReview $1 closely ($ARGUMENTS).")
	stdout, stderr, code := e.run("run", "/review", "pkg/foo", "bar")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	msgs := e.srv.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "Review pkg/foo closely (pkg/foo bar)." {
		t.Fatalf("prompt = %q", got)
	}
}

// An unknown command is a usage error naming the nearest commands, and
// the model is never asked; a path such as /tmp/x is an ordinary prompt.
func TestRunUnknownSlashCommand(t *testing.T) {
	e := newE2E(t, answer("looked at it"))
	writeFile(t, filepath.Join(e.work, ".reasonix", "commands", "review.md"), "Review.")
	_, stderr, code := e.run("run", "/reveiw", "x")
	if code != exitUsage || !strings.Contains(stderr, "unknown command /reveiw") || !strings.Contains(stderr, "/review") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}
	_, stderr, code = e.run("run", "/tmp/x is broken")
	if code != exitOK {
		t.Fatalf("a path prompt failed: %d %s", code, stderr)
	}
	msgs := e.srv.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "/tmp/x is broken" {
		t.Fatalf("prompt = %q", got)
	}
}

func TestCommandsList(t *testing.T) {
	e := newE2E(t)
	writeFile(t, filepath.Join(e.work, ".reasonix", "commands", "git", "commit.md"), "---\ndescription: Commit the work\nargument-hint: [message]\n---\nCommit.")
	writeFile(t, filepath.Join(e.work, ".reasonix", "commands", "broken.md"), "---\nno closing fence")
	stdout, stderr, code := e.run("commands", "list")
	if code != exitOK || !strings.Contains(stdout, "/git:commit [message]") || !strings.Contains(stdout, "Commit the work") ||
		!strings.Contains(stderr, "broken.md skipped") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	stdout, _, _ = e.run("commands", "list", "--json")
	var out struct {
		Commands []struct{ Name string } `json:"commands"`
		Skipped  []any                   `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Commands) != 1 || out.Commands[0].Name != "git:commit" || len(out.Skipped) != 1 {
		t.Fatalf("json = %s (%v)", stdout, err)
	}
}

// `subagent try` runs a profile read-only: its body is the system prompt
// and a write is refused even though the profile itself allows writers;
// `subagent run --auto` lets the same profile write.
func TestSubagentTryAndRun(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("w1", "write_file", `{"path":"out.txt","content":"x"}`)),
		answer("tried"),
		toolTurn(call("w2", "write_file", `{"path":"out.txt","content":"x"}`)),
		answer("wrote it"),
	)
	writeFile(t, filepath.Join(e.work, ".reasonix", "skills", "fixer", "SKILL.md"), "---\nrunAs: subagent\ndescription: Fixes\n---\nYou are the fixer.")
	stdout, stderr, code := e.run("subagent", "try", "fixer", "write out.txt")
	if code != exitOK || !strings.Contains(stdout, "tried") {
		t.Fatalf("try: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "out.txt")); !os.IsNotExist(err) {
		t.Fatal("subagent try wrote a file")
	}
	req := e.srv.Requests()[0]
	if req.Messages[0].Content != "You are the fixer." {
		t.Fatalf("system prompt = %q", req.Messages[0].Content)
	}
	for _, tool := range req.Tools {
		if tool.Name == "write_file" || tool.Name == "bash" {
			t.Fatalf("the read-only try offered %s", tool.Name)
		}
	}
	stdout, stderr, code = e.run("subagent", "run", "--auto", "fixer", "write out.txt")
	if code != exitOK || !strings.Contains(stdout, "wrote it") {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(filepath.Join(e.work, "out.txt")); err != nil || string(data) != "x" {
		t.Fatalf("out.txt = %q, %v", data, err)
	}
	_, stderr, code = e.run("subagent", "try", "nobody", "x")
	if code != exitUsage || !strings.Contains(stderr, `"nobody"`) {
		t.Fatalf("unknown profile: exit %d %s", code, stderr)
	}
}

// `run /mcp__example__greet Ada` renders the plugin's prompt.
func TestRunMCPPromptCommand(t *testing.T) {
	e := newE2E(t, answer("hello"))
	e.configure(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	stdout, stderr, code := e.run("run", "/mcp__example__greet", "Ada")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	msgs := e.srv.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "Ada") || strings.HasPrefix(got, "/mcp__") {
		t.Fatalf("prompt = %q, want the plugin's rendered prompt", got)
	}
}

// `commands list --workspace NAME` reads a [[workspaces]] entry's base
// commit, as the service does: an uncommitted file is not listed.
func TestCommandsListWorkspaceReadsTheBase(t *testing.T) {
	e := newE2E(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".reasonix", "commands", "deps", "bump.md"), "---\ndescription: Bump deps\n---\nBump.")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "root"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(repo, ".reasonix", "commands", "draft.md"), "not committed")
	e.configure(fmt.Sprintf("\n[[workspaces]]\nname = \"app\"\nrepo = %q\n", repo))
	stdout, stderr, code := e.run("commands", "list", "--workspace", "app")
	if code != exitOK || !strings.Contains(stdout, "/deps:bump") || strings.Contains(stdout, "draft") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// `commands list` shows the prompts of the configured [[plugins]] with
// their descriptions and argument hints; --no-mcp leaves them out.
func TestCommandsListShowsMCPPrompts(t *testing.T) {
	e := newE2E(t)
	e.configure(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	writeFile(t, filepath.Join(e.work, ".reasonix", "commands", "review.md"), "Review.")
	stdout, stderr, code := e.run("commands", "list")
	if code != exitOK || !strings.Contains(stdout, "/mcp__example__greet <name>") || !strings.Contains(stdout, "Asks the model to greet someone.") ||
		!strings.Contains(stdout, "(mcp)") || !strings.Contains(stdout, "/review") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	stdout, _, _ = e.run("commands", "list", "--json")
	var out struct {
		Commands []struct {
			Name, Scope  string
			ArgumentHint string `json:"argument_hint"`
		} `json:"commands"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Commands) != 2 ||
		out.Commands[0].Name != "mcp__example__greet" || out.Commands[0].Scope != "mcp" || out.Commands[0].ArgumentHint != "<name>" {
		t.Fatalf("json = %s (%v)", stdout, err)
	}
	stdout, _, _ = e.run("commands", "list", "--no-mcp")
	if strings.Contains(stdout, "mcp__") {
		t.Fatalf("--no-mcp listed %s", stdout)
	}
}

// An unknown MCP prompt in `run` is a usage error naming the nearest
// prompt, and the model is never asked.
func TestRunUnknownMCPPrompt(t *testing.T) {
	e := newE2E(t, answer("hello"))
	e.configure(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	_, stderr, code := e.run("run", "/mcp__example__gret", "Ada")
	if code != exitUsage || !strings.Contains(stderr, "did you mean /mcp__example__greet") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}
}
