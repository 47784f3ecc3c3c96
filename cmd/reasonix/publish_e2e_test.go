package main

import (
	"strings"
	"testing"

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
