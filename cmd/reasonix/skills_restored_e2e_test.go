package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A workspace's skills come from the task's base commit: the committed
// skill is in the index of every request's system prompt, byte for byte
// the same, also after the task rewrote the skill and was resumed by an
// approval in a new session; read_skill returns the committed body; an
// uncommitted skill in the repository and the task's own edit never
// count; naming the skill as the task's command expands its body.
func TestServeSkillsComeFromTheBaseCommit(t *testing.T) {
	const committed = "COMMITTED review steps for $ARGUMENTS."
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"COMMITTED review steps for pkg/store.": func(req agenttest.Request) agenttest.Turn {
			switch toolResults(req) {
			case 0:
				return toolTurn(call("w", "write_file", `{"path":".reasonix/skills/review/SKILL.md","content":"---\ndescription: EVIL index line\n---\nEVIL body"}`))
			case 1:
				return toolTurn(call("b", "bash", `{"command":"echo resumed"}`))
			case 2:
				return toolTurn(call("r", "read_skill", `{"name":"review"}`))
			}
			return answer("done")
		},
	})...)
	repo := gitRepo(t)
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "review", "SKILL.md"), "---\ndescription: Review the diff carefully\n---\n"+committed+"\n")
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "release.md"), "---\ndescription: Cut a release\ninvocation: manual\n---\nRelease.\n")
	for _, args := range [][]string{{"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "skills"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "review", "SKILL.md"), "---\ndescription: UNCOMMITTED line\n---\nUNCOMMITTED body\n")
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "sneaky.md"), "---\ndescription: UNCOMMITTED skill\n---\nx\n")
	writeFile(t, filepath.Join(e.home, "skills", "notes", "SKILL.md"), "---\ndescription: Keep notes (user skill)\n---\nNotes.\n")
	e.configure(fmt.Sprintf("\n[[workspaces]]\nname = \"app\"\nrepo = %q\n\n[permissions]\nask = [\"Bash(echo:*)\"]\n", repo))
	s := e.serve(t)
	id := s.submit("", map[string]any{"workspace": "app", "posture": "auto", "command": "review", "args": []string{"pkg/store"}})
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
	if len(reqs) < 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	system := reqs[0].Messages[0].Content
	if !strings.Contains(system, "\n- review: Review the diff carefully\n") || !strings.Contains(system, "\n- notes: Keep notes (user skill)\n") {
		t.Fatalf("the index lacks the skills:\n%s", system)
	}
	for _, bad := range []string{"UNCOMMITTED", "EVIL", "release"} {
		if strings.Contains(system, bad) {
			t.Fatalf("%s reached the index:\n%s", bad, system)
		}
	}
	for i, r := range reqs {
		if r.Messages[0].Role != agent.RoleSystem || r.Messages[0].Content != system {
			t.Fatalf("request %d's system prompt differs from the first:\n%s", i, r.Messages[0].Content)
		}
	}
	var first, read string
	last := reqs[len(reqs)-1].Messages
	for _, m := range last {
		if m.Role == agent.RoleUser && first == "" {
			first = m.Content
		}
		if m.Role == agent.RoleTool && m.ToolCallID == "r" {
			read = m.Content
		}
	}
	if !strings.Contains(first, "COMMITTED review steps for pkg/store.") {
		t.Fatalf("the task's prompt is %q, want the skill's body expanded", first)
	}
	if !strings.Contains(read, committed) || strings.Contains(read, "EVIL") || strings.Contains(read, "UNCOMMITTED") {
		t.Fatalf("read_skill returned %q, want the committed body", read)
	}
}

// `reasonix run /skill args` on a person's checkout expands the skill and
// lists it in the index; a disabled skill is neither listed nor a command.
func TestRunSlashSkill(t *testing.T) {
	e := newE2E(t, answer("noted"))
	writeFile(t, filepath.Join(e.work, ".reasonix", "skills", "notes.md"), "---\ndescription: Take notes\n---\nWrite notes about the change.")
	writeFile(t, filepath.Join(e.work, ".reasonix", "skills", "old", "SKILL.md"), "---\ndescription: Retired\n---\nOld.")
	e.configure("\n[skills]\ndisabled_skills = [\"old\"]\n")
	if _, stderr, code := e.run("run", "/notes", "pkg/store"); code != exitOK {
		t.Fatalf("exit %d %s", code, stderr)
	}
	msgs := e.srv.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "Write notes about the change.\n\nArguments: pkg/store" {
		t.Fatalf("prompt = %q", got)
	}
	if sys := msgs[0].Content; !strings.Contains(sys, "- notes: Take notes\n") || strings.Contains(sys, "Retired") {
		t.Fatalf("system prompt = %s", sys)
	}
	if _, stderr, code := e.run("run", "/old"); code != exitUsage || !strings.Contains(stderr, "unknown command /old") {
		t.Fatalf("a disabled skill ran: %d %s", code, stderr)
	}
}
