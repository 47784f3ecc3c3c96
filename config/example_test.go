package config

import (
	"os"
	"path/filepath"
	"testing"
)

// The example at the repository root must keep loading, so the docs never
// show a key the loader rejects.
func TestExampleConfigLoads(t *testing.T) {
	f := newFixture(t)
	for _, k := range []string{"DEEPSEEK_API_KEY", "STRIPE_KEY", "REASONIX_API_TOKEN"} {
		f.env[k] = "x"
	}
	f.env["HOME"] = "/home/u"
	o := f.opts()
	o.File = filepath.Join("..", "reasonix.example.toml")
	c, err := Load(o)
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	if len(c.Providers) != 4 || len(c.Plugins) != 2 || len(c.Workspaces) != 1 || len(c.Schedules) != 2 || c.Schedules[1].Command != "deps:bump" {
		t.Errorf("example has %d providers, %d plugins, %d workspaces, %d schedules", len(c.Providers), len(c.Plugins), len(c.Workspaces), len(c.Schedules))
	}
	r, err := c.ResolveModel("")
	if err != nil || r.Model != "deepseek-chat" || !r.Priced {
		t.Errorf("default model = %+v, %v", r, err)
	}
	if c.Sandbox.ForbidRead[0] != "/home/u/secrets" || c.Plugins[1].Headers["Authorization"] != "Bearer x" {
		t.Errorf("expansion: forbid_read %q headers %q", c.Sandbox.ForbidRead, c.Plugins[1].Headers)
	}
	if kinds := [4]string{c.Providers[0].Kind, c.Providers[1].Kind, c.Providers[2].Kind, c.Providers[3].Kind}; kinds != [4]string{"openai", "openai", "anthropic", "responses"} {
		t.Errorf("kinds = %q", kinds)
	}
	if c.Providers[1].RequestURL != "http://127.0.0.1:11434/v1/chat/completions" {
		t.Errorf("request_url default not applied: %q", c.Providers[1].RequestURL)
	}

	// Without the variables it names, the example must fail clearly.
	delete(f.env, "STRIPE_KEY")
	if _, err := Load(o); err == nil {
		t.Error("example loaded without STRIPE_KEY")
	}
	if _, err := os.Stat(o.File); err != nil {
		t.Fatal(err)
	}
}
