package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seed specification's §5 sample, as printed and with every key it
// mentions switched on, loads: what this service implements takes effect,
// what it does not is a one-line warning naming the key, never an error.
func TestSeedSampleLoads(t *testing.T) {
	for _, name := range []string{"seed_sample.toml", "seed_sample_all.toml"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			f := newFixture(t)
			f.env["HOME"] = "/home/x"
			f.env["STRIPE_KEY"] = "sk"
			f.proj(string(data))
			c := f.load()
			warned := strings.Join(c.Warnings(), "\n")
			for _, k := range []string{"ui.show_turn_usage", "agent.reasoning_language", "providers.web_search",
				"environment.enabled", "tools.browser_tools", "tools.shell.prefer"} {
				if !strings.Contains(warned, `"`+k+`" ignored: `) {
					t.Errorf("no warning for %s in\n%s", k, warned)
				}
			}
			if n := strings.Count(warned, "\n") + 1; name == "seed_sample.toml" && n != 7 {
				t.Errorf("%d warnings, want one per ignored key (7):\n%s", n, warned)
			}
			if c.Providers[0].Kind != "anthropic" || c.Tools.BashTimeoutSeconds != 120 || len(c.Permissions.Deny) != 2 {
				t.Errorf("implemented keys did not apply: %+v", c.Providers[0])
			}
			if name != "seed_sample_all.toml" {
				return
			}
			for _, k := range []string{"language", "ui.cursor_shape", "agent.plan_mode_read_only_commands",
				"agent.planner_max_steps", "agent.soft_compact_ratio", "providers.models_url", "serve.token",
				"environment.tools"} {
				if !strings.Contains(warned, `"`+k+`" ignored: `) {
					t.Errorf("no warning for %s in\n%s", k, warned)
				}
			}
			// [skills] is implemented: its keys apply, unwarned.
			sk := c.Skills
			if strings.Contains(warned, `"skills.`) || len(sk.Paths) != 2 || sk.Paths[0] != "/home/x/my-skills" ||
				!strings.HasSuffix(sk.Paths[1], "/shared/skills") || !filepath.IsAbs(sk.Paths[1]) ||
				!sk.Excluded("/home/x/.agents/skills") || sk.DisabledSkills[0] != "review" || !sk.SuppressWarnings {
				t.Errorf("[skills] = %+v\n%s", sk, warned)
			}
			a := c.Agent
			if a.PlannerModel != "deepseek-pro" || a.SubagentEffort != "high" || a.SubagentEfforts["review"] != "max" {
				t.Errorf("agent keys: %+v", a)
			}
			pro := c.Providers[1]
			if pro.RequestURL != "https://proxy.example.com/v1/chat/completions" || pro.Effort != "high" {
				t.Errorf("chat_url was not migrated to request_url, or effort lost: %+v", pro)
			}
			if !strings.Contains(warned, "providers[deepseek-pro].chat_url is the legacy name of request_url") {
				t.Errorf("no migration warning:\n%s", warned)
			}
		})
	}
}

// An unlisted key inside a table the seed's sample has is still unknown,
// and chat_url on a kind that never had it is ignored, not used.
func TestSeedKeysStayNarrow(t *testing.T) {
	f := newFixture(t)
	f.proj("[ui]\ntheme = \"dark\"\n")
	wantContains(t, f.loadErr(), `unknown key "ui.theme"`)
	f.proj("[agent]\nsubagent_effort = \"extreme\"\n")
	wantContains(t, f.loadErr(), `agent.subagent_effort: "extreme" is not one of minimal, low, medium, high, max`)

	f = newFixture(t)
	f.proj("[[providers]]\nname = \"a\"\nkind = \"anthropic\"\nmodel = \"m\"\nchat_url = \"https://x.example/v1/messages\"\n")
	c := f.load()
	if c.Providers[0].RequestURL != "" || !strings.Contains(strings.Join(c.Warnings(), "\n"), "chat_url ignored") {
		t.Errorf("request_url %q, warnings %q", c.Providers[0].RequestURL, c.Warnings())
	}
}

// An untrusted project file may carry the seed's interactive keys: they
// change nothing, so they neither loosen nor need trust.
func TestSeedKeysInUntrustedProject(t *testing.T) {
	f := newFixture(t)
	f.proj("[ui]\nshow_turn_usage = false\n[environment]\nenabled = true\n[agent]\nreasoning_language = \"auto\"\n")
	c, err := f.loadUntrusted()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings()) != 3 {
		t.Errorf("warnings %q, want one per key", c.Warnings())
	}
}
