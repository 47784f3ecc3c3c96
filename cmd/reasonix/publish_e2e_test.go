package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/forge/forgetest"
)

// config check, doctor and serve agree on a [workspaces.publish]: a missing
// token variable stops all three (serve with exit 2), and the two checks ask
// the forge whether the token works and say what is wrong.
func TestEveryEntryPointChecksPublish(t *testing.T) {
	for _, kind := range []string{"github", "gitlab"} {
		t.Run(kind, func(t *testing.T) {
			var srv *forgetest.Server
			if kind == "github" {
				srv = forgetest.NewGitHub(t, forgetest.Options{})
			} else {
				srv = forgetest.NewGitLab(t, forgetest.Options{})
			}
			e := newE2E(t)
			e.configure(`
[[workspaces]]
name = "app"
repo = "` + gitRepo(t) + `"
[workspaces.publish]
forge = "` + kind + `"
api_url = "` + srv.URL + `"
project = "` + srv.Project() + `"
token_env = "FORGE_TOKEN"
push_url = "https://git.example.invalid/acme/app.git"
`)
			out, stderr, code := e.run("config", "check")
			if code != exitUsage || !strings.Contains(stderr, "$FORGE_TOKEN is not set") {
				t.Errorf("config check without the token: exit %d\n%s%s", code, out, stderr)
			}
			_, stderr, code = e.run("serve", "--addr", "127.0.0.1:0")
			if code != exitUsage || !strings.Contains(stderr, "$FORGE_TOKEN is not set") {
				t.Errorf("serve without the token: exit %d\n%s", code, stderr)
			}

			e.extra = []string{"FORGE_TOKEN=not-the-token"}
			out, stderr, code = e.run("config", "check")
			if code != exitUsage || !strings.Contains(stderr, "workspace app: publish:") || !strings.Contains(stderr, "refused the token") {
				t.Errorf("config check with a wrong token: exit %d\n%s%s", code, out, stderr)
			}
			out, _, code = e.run("doctor")
			if code != exitFailed || !strings.Contains(out, "FAIL  publish") || !strings.Contains(out, "refused the token") {
				t.Errorf("doctor with a wrong token: exit %d\n%s", code, out)
			}

			e.extra = []string{"FORGE_TOKEN=" + srv.Token()}
			out, stderr, code = e.run("config", "check")
			if code != exitOK || !strings.Contains(out, "workspace app: publishes to "+srv.Project()+" as "+srv.User()) {
				t.Errorf("config check with the token: exit %d\n%s%s", code, out, stderr)
			}
			if strings.Contains(out+stderr, srv.Token()) {
				t.Errorf("config check printed the token:\n%s%s", out, stderr)
			}
		})
	}
}

// serve publishes a task that changed something as one pull request, and
// the CLI shows it: `tasks show` prints the PR, `tasks diff` the change.
// The token is in no event, no log line and no CLI output.
func TestServePublishesAndTheCLIShowsIt(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"add a changelog": func(req agenttest.Request) agenttest.Turn {
			if lastToolResult(req) != "" {
				return answer("Added CHANGELOG.md.")
			}
			return toolTurn(call("w", "write_file", `{"path":"CHANGELOG.md","content":"# Changelog\n"}`))
		},
	})...)
	srv := forgetest.NewGitHub(t, forgetest.Options{})
	git := forgetest.NewGitServer(t, srv.Project(), srv.Token())
	srv.UseGit(git)
	repo := gitRepo(t)
	push := exec.Command("git", "-c", "http.extraHeader=Authorization: Bearer "+srv.Token(), "push", "-q", git.URL, "main")
	push.Dir = repo
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("push main: %v\n%s", err, out)
	}
	e.configure(fmt.Sprintf(`
[[workspaces]]
name = "app"
repo = %q
[workspaces.publish]
forge = "github"
api_url = %q
project = %q
token_env = "FORGE_TOKEN"
push_url = %q
`, repo, srv.URL, srv.Project(), git.URL))
	e.extra = append(e.extra, "FORGE_TOKEN="+srv.Token())
	s := e.serve(t)
	id := s.submit("add a changelog", map[string]any{"workspace": "app", "posture": "auto"})
	got := s.waitState(id, "succeeded", "failed", "blocked")
	if got.State != "succeeded" {
		t.Fatalf("task = %+v\n%s", got, s.events(id))
	}
	prs := srv.PRs()
	if len(prs) != 1 || prs[0].Head != "reasonix/"+id || git.Ref(t, "refs/heads/reasonix/"+id) == "" {
		t.Fatalf("forge PRs = %+v", prs)
	}

	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	out, stderr, code := e.run("tasks", "show", id, "--server", s.url)
	if want := fmt.Sprintf("published PR #%d (open) ", prs[0].Number); code != 0 || !strings.Contains(out, want) {
		t.Errorf("tasks show: exit %d, want %q\n%s%s", code, want, out, stderr)
	}
	out, stderr, code = e.run("tasks", "diff", id, "--server", s.url)
	if code != 0 || !strings.Contains(out, "+++ b/CHANGELOG.md") || !strings.Contains(out, "+# Changelog") {
		t.Errorf("tasks diff: exit %d\n%s%s", code, out, stderr)
	}
	if events := s.events(id); !strings.Contains(events, `"published"`) || strings.Contains(events, srv.Token()) {
		t.Errorf("events lack the published event or hold the token:\n%s", events)
	}
	if strings.Contains(s.stderr.String(), srv.Token()) {
		t.Error("the service log holds the token")
	}
}
