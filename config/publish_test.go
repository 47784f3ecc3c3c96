package config

import (
	"strings"
	"testing"
	"time"
)

func TestPublishDefaults(t *testing.T) {
	f := newFixture(t)
	f.proj(`
[[workspaces]]
name = "app"
repo = "https://git.example.com/acme/app.git"
base = "develop"
[workspaces.publish]
forge = "GitHub"
project = "acme/app"
token_env = "GH_TOKEN"
`)
	c := f.load()
	p := c.Workspaces[0].Publish
	if p == nil {
		t.Fatal("no publish table")
	}
	if p.Forge != "github" || p.Mode != PublishPR || p.Base != "develop" || p.PushURL != "https://git.example.com/acme/app.git" ||
		p.CITimeout != DefaultCITimeout || p.FixAttempts() != DefaultCIFixAttempts || !p.Enabled() {
		t.Errorf("defaults = %+v", p)
	}
	if names := c.SecretEnvNames(); len(names) == 0 || names[0] != "GH_TOKEN" {
		t.Errorf("SecretEnvNames = %q, want the token variable among the secrets", names)
	}
}

func TestPublishProblemsNameTheirKeys(t *testing.T) {
	for _, tc := range []struct {
		name, table string
		want        []string
	}{
		{"unknown mode", `forge = "github"
project = "a/b"
token_env = "T"
mode = "merge"`, []string{"publish.mode", `"merge" is not one of`}},
		{"missing forge, project, token", ``, []string{"publish.forge", "publish.project", "publish.token_env"}},
		{"token pasted", `forge = "gitlab"
project = "g/p"
token_env = "glpat-abc def"`, []string{"publish.token_env", "NAME of an environment variable"}},
		{"local repo needs push_url", `forge = "github"
project = "a/b"
token_env = "T"`, []string{"publish.push_url", "is required when"}},
		{"password in push_url", `forge = "github"
project = "a/b"
token_env = "T"
push_url = "https://u:hunter2@example.com/a/b.git"`, []string{"publish.push_url", "must not hold a password"}},
		{"github project shape", `forge = "github"
project = "a/b/c"
token_env = "T"
push_url = "https://example.com/a.git"`, []string{"publish.project"}},
		{"ci keys range", `forge = "github"
project = "a/b"
token_env = "T"
push_url = "https://example.com/a.git"
ci_timeout = "-1m"
ci_fix_attempts = 11`, []string{"publish.ci_timeout", "publish.ci_fix_attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.proj("[[workspaces]]\nname = \"app\"\nrepo = \".\"\n[workspaces.publish]\n" + tc.table + "\n")
			got := f.loadErr()
			wantContains(t, got, tc.want...)
			if tc.name == "password in push_url" && strings.Contains(got, "hunter2") {
				t.Errorf("the error repeats the password: %s", got)
			}
		})
	}
}

func TestPublishOffNeedsNothingElse(t *testing.T) {
	f := newFixture(t)
	f.proj("[[workspaces]]\nname = \"app\"\nrepo = \".\"\n[workspaces.publish]\nmode = \"off\"\nci_timeout = \"1h\"\n")
	c := f.load()
	if p := c.Workspaces[0].Publish; p.Enabled() || p.CITimeout != time.Hour {
		t.Errorf("publish = %+v, want it switched off with its keys kept", p)
	}
}

func TestPublishAskLoads(t *testing.T) {
	f := newFixture(t)
	f.proj("[[workspaces]]\nname = \"app\"\nrepo = \"https://git.example.com/a/b.git\"\n[workspaces.publish]\nforge = \"github\"\nproject = \"a/b\"\ntoken_env = \"T\"\nmode = \"Ask\"\nwait_ci = true\n")
	c := f.load()
	if p := c.Workspaces[0].Publish; p.Mode != PublishAsk || !p.Enabled() || !p.WaitCI {
		t.Errorf("publish = %+v, want mode ask with CI waited for", p)
	}
}
