package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `skills list --workspace W` lists what a task of W is offered: the
// home's, a [skills] paths root's and the repository's skills at its base
// commit (an uncommitted one is not), each with its source, invocation
// and run-as; a broken file is a warning; --json says the same.
func TestSkillsList(t *testing.T) {
	e := newE2E(t)
	repo, team := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "review", "SKILL.md"), "---\ndescription: Review the diff\n---\nReview.")
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "fixer.md"), "---\ndescription: Fix one bug\nrunAs: subagent\n---\nYou fix.")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "root"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(repo, ".reasonix", "skills", "draft.md"), "---\ndescription: not committed\n---\nDraft.")
	writeFile(t, filepath.Join(e.home, "skills", "notes.md"), "---\ndescription: Keep notes\ninvocation: manual\n---\nNotes.")
	writeFile(t, filepath.Join(team, "deploy", "SKILL.md"), "---\ndescription: Deploy it\n---\nDeploy.")
	writeFile(t, filepath.Join(team, "broken.md"), "---\nno closing fence")
	e.configure(fmt.Sprintf("\n[skills]\npaths = [%q]\n\n[[workspaces]]\nname = \"app\"\nrepo = %q\n", team, repo))

	stdout, stderr, code := e.run("skills", "list", "--workspace", "app")
	if code != exitOK || strings.Contains(stdout, "draft") || !strings.Contains(stderr, "broken.md skipped") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, line := range [][]string{
		{"deploy", "paths", "model", "inline", "Deploy it"},
		{"fixer", "base commit", "model", "subagent", "Fix one bug"},
		{"notes", "user", "manual", "inline", "Keep notes"},
		{"review", "base commit", "model", "inline", "Review the diff"},
	} {
		found := false
		for _, l := range strings.Split(stdout, "\n") {
			f := strings.Fields(l)
			if len(f) > 0 && f[0] == line[0] {
				found = strings.Join(f, " ") == strings.Join(strings.Fields(strings.Join(line, " ")), " ")
			}
		}
		if !found {
			t.Errorf("no line %v in\n%s", line, stdout)
		}
	}

	stdout, _, code = e.run("skills", "list", "--workspace", "app", "--json")
	var out struct {
		Skills []struct {
			Name, Description, Source, Invocation, RunAs, Path string
		} `json:"skills"`
		Skipped []struct{ Path string } `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitOK || len(out.Skills) != 4 || len(out.Skipped) != 1 {
		t.Fatalf("json (exit %d) = %s (%v)", code, stdout, err)
	}
	if f := out.Skills[1]; f.Name != "fixer" || f.Source != "base commit" || f.Invocation != "model" || f.Path != "fixer.md" {
		t.Fatalf("fixer = %+v", f)
	}
	if !strings.Contains(stdout, `"run_as": "subagent"`) {
		t.Fatalf("json lacks run_as: %s", stdout)
	}
}
