package config

import (
	"strings"
	"testing"

	"reasonix/internal/posture"
)

const okHook = "[[webhooks]]\nname = \"ci\"\nkind = \"github\"\nsecret_env = \"GH_SECRET\"\nprompt = \"fix {{.x}}\"\n"

// Each case is one [[webhooks]] entry with exactly one problem.
func TestValidateWebhooks(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"kind", strings.Replace(okHook, `"github"`, `"gitea"`, 1), `webhooks[ci].kind: "gitea" is not one of github, gitlab, hmac`},
		{"secret required", strings.Replace(okHook, "secret_env = \"GH_SECRET\"\n", "", 1), `webhooks[ci].secret_env: is required`},
		{"secret pasted", strings.Replace(okHook, `"GH_SECRET"`, `"It's a secret"`, 1), `webhooks[ci].secret_env: must be the NAME`},
		{"rotation names", okHook + "secrets_env = [\"a b\"]", `webhooks[ci].secrets_env: must be the NAME`},
		{"prompt", strings.Replace(okHook, `"fix {{.x}}"`, `" "`, 1), `webhooks[ci].prompt: is required`},
		{"yolo", okHook + "posture = \"yolo\"", `webhooks[ci].posture: yolo is not allowed for webhooks`},
		{"workspace", okHook + "workspace = \"nope\"", `webhooks[ci].workspace: "nope" is not a [[workspaces]] name`},
		{"events", okHook + "events = [\"check run\"]", `webhooks[ci].events: entry 0 must be an event name`},
		{"notify", okHook + "notify = [{ transport = \"slack\" }]", `webhooks[ci].notify: entry 0 needs a transport and a channel`},
		{"name", strings.Replace(okHook, `"ci"`, `"a/b"`, 1), `webhooks[0].name: "a/b" must start`},
		{"budget without goal", okHook + "budget_usd = 2.5", `webhooks[ci].budget_usd: is a goal's cost budget; set goal = true`},
		{"negative budget", okHook + "goal = true\nbudget_usd = -1", `webhooks[ci].budget_usd: must be a non-negative amount of USD`},
		{"huge budget", okHook + "goal = true\nbudget_usd = 2e6", `webhooks[ci].budget_usd: must be at most 1000000 USD`},
		{"twice", okHook + okHook, `webhooks[ci].name: "ci" is declared twice in this file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.proj(tc.file + "\n")
			got := f.loadErr()
			wantContains(t, got, "config: "+p+": "+tc.want)
			if n := strings.Count(got, "\n") + 1; n != 1 {
				t.Errorf("want exactly one problem, got %d:\n%s", n, got)
			}
		})
	}
}

func TestWebhookDefaults(t *testing.T) {
	f := newFixture(t)
	f.user(okHook + "secrets_env = [\"GH_OLD\"]\n")
	c := f.load()
	if len(c.Webhooks) != 1 {
		t.Fatalf("webhooks = %+v", c.Webhooks)
	}
	w := c.Webhooks[0]
	if w.Posture != posture.Ask || w.Source == "" || strings.Join(w.SecretVars(), ",") != "GH_SECRET,GH_OLD" {
		t.Fatalf("webhook = %+v", w)
	}
}
