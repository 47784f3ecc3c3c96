package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A task's instruction files come from its base commit and the user's
// home: the committed AGENTS.md rule is in the system prompt of every
// request, byte for byte the same, also after the task edited AGENTS.md
// and was resumed by an approval in a new session; neither that edit nor
// an uncommitted edit in the repository counts. `tasks show` names them.
func TestServeInstructionsComeFromTheBaseCommit(t *testing.T) {
	const rule = "Run gofmt before every commit."
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"follow the rules": func(req agenttest.Request) agenttest.Turn {
			switch toolResults(req) {
			case 0:
				return toolTurn(call("r", "read_file", `{"path":"AGENTS.md"}`))
			case 1:
				return toolTurn(call("w", "write_file", `{"path":"AGENTS.md","content":"EVIL RULE from the task"}`))
			case 2:
				return toolTurn(call("p", "read_file", `{"path":"pkg/main.go"}`))
			case 3:
				return toolTurn(call("b", "bash", `{"command":"echo resumed"}`))
			}
			return answer("done")
		},
	})...)
	repo := gitRepo(t)
	writeFile(t, filepath.Join(repo, "AGENTS.md"), rule+"\n")
	writeFile(t, filepath.Join(repo, "pkg", "AGENTS.md"), "PKG RULE: no globals.\n")
	writeFile(t, filepath.Join(repo, "pkg", "main.go"), "package main\n")
	for _, args := range [][]string{{"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "rules"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(repo, "AGENTS.md"), "UNCOMMITTED edit of the checkout\n")
	writeFile(t, filepath.Join(e.home, "AGENTS.md"), "USER RULE: answer briefly.\n")
	e.configure(fmt.Sprintf("\n[[workspaces]]\nname = \"app\"\nrepo = %q\n\n[permissions]\nask = [\"Bash(echo:*)\"]\n", repo))
	s := e.serve(t)
	id := s.submit("follow the rules", map[string]any{"workspace": "app", "posture": "auto"})
	s.waitState(id, "waiting_approval")
	aps := s.pending(id)
	if len(aps) != 1 {
		t.Fatalf("pending = %+v\n%s", aps, s.events(id))
	}
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	if out, stderr, code := e.run("approvals", "allow", aps[0].ID, "--server", s.url); code != 0 {
		t.Fatalf("approvals allow: %d %s %s", code, out, stderr)
	}
	if got := s.waitState(id, "succeeded", "failed", "blocked"); got.State != "succeeded" {
		t.Fatalf("task = %+v\n%s", got, s.events(id))
	}
	reqs := e.srv.Requests()
	if len(reqs) < 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	system := reqs[0].Messages[0].Content
	if !strings.Contains(system, rule) || !strings.Contains(system, `source="AGENTS.md"`) ||
		!strings.Contains(system, "USER RULE") || !strings.Contains(system, `source="user:AGENTS.md"`) {
		t.Fatalf("system prompt lacks the instructions:\n%s", system)
	}
	for i, r := range reqs {
		if r.Messages[0].Role != agent.RoleSystem || r.Messages[0].Content != system {
			t.Fatalf("request %d's system prompt differs from the first:\n%s", i, r.Messages[0].Content)
		}
	}
	if strings.Contains(system, "EVIL") || strings.Contains(system, "UNCOMMITTED") {
		t.Fatalf("an edit outside the base commit reached the prompt:\n%s", system)
	}
	if data, err := os.ReadFile(filepath.Join(repo, "AGENTS.md")); err != nil || !strings.Contains(string(data), "UNCOMMITTED") {
		t.Fatalf("the checkout's AGENTS.md changed: %q %v", data, err)
	}
	// A directory's own file arrives with the first file read below it.
	var pkgResult string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == agent.RoleTool && m.ToolCallID == "p" {
			pkgResult = m.Content
		}
	}
	if !strings.Contains(pkgResult, "package main") || !strings.Contains(pkgResult, "PKG RULE") || !strings.Contains(pkgResult, `source="pkg/AGENTS.md"`) {
		t.Fatalf("reading pkg/main.go gave %q", pkgResult)
	}
	out, stderr, code := e.run("tasks", "show", id, "--server", s.url)
	used := regexp.MustCompile(`instructions used  user:AGENTS\.md \([0-9.]+ K?B\), AGENTS\.md \([0-9.]+ K?B\), pkg/AGENTS\.md \([0-9.]+ K?B\) at commit [0-9a-f]{12}\n`)
	if code != 0 || !used.MatchString(out) {
		t.Fatalf("tasks show: %d\n%s%s", code, out, stderr)
	}
}

// `reasonix run` on a person's own checkout reads its instruction files
// from the checkout as it is.
func TestRunReadsTheCheckoutsInstructions(t *testing.T) {
	e := newE2E(t, answer("ok"))
	writeFile(t, filepath.Join(e.work, "CLAUDE.md"), "Claude-style rule.\n")
	if _, stderr, code := e.run("run", "hello"); code != exitOK {
		t.Fatalf("exit %d %s", code, stderr)
	}
	if sys := e.srv.Requests()[0].Messages[0].Content; !strings.Contains(sys, "Claude-style rule.") || !strings.Contains(sys, `source="CLAUDE.md"`) {
		t.Fatalf("system prompt = %s", sys)
	}
}

// toolResults counts the tool results of a request's conversation.
func toolResults(req agenttest.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == agent.RoleTool {
			n++
		}
	}
	return n
}
