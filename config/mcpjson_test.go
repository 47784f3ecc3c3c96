package config

import (
	"path/filepath"
	"slices"
	"testing"
)

const mcpJSONDoc = `{
  "mcpServers": {
    "stripe": { "type": "http", "url": "https://mcp.stripe.com",
                "headers": { "Authorization": "Bearer ${STRIPE_KEY}" } },
    "files": { "command": "npx", "args": ["-y", "fs-server", "${REASONIX_WORKSPACE_ROOT}"], "env": { "DEBUG": "1" } },
    "shared": { "command": "from-mcp-json" },
    "fromuser": { "command": "mcp-json-beats-user" },
    "stream": { "type": "streamable-http", "url": "https://s.example.com/mcp", "timeout": 5 }
  }
}`

func TestLoadMCPJSON(t *testing.T) {
	f := newFixture(t)
	f.env["STRIPE_KEY"] = "sk"
	f.user(`
[[plugins]]
name = "fromuser"
command = "user-version"
[[plugins]]
name = "useronly"
command = "u"
`)
	mcp := f.write(filepath.Join(f.project, MCPJSONFile), mcpJSONDoc)
	proj := f.proj(`
[[plugins]]
name = "shared"
command = "from-toml"
`)
	c := f.load()
	byName := map[string]Plugin{}
	var names []string
	for _, p := range c.Plugins {
		byName[p.Name] = p
		names = append(names, p.Name)
	}
	if want := []string{"fromuser", "useronly", "files", "shared", "stream", "stripe"}; !slices.Equal(names, want) {
		t.Errorf("plugins = %q, want %q", names, want)
	}
	if p := byName["shared"]; p.Command != "from-toml" || p.Source != proj {
		t.Errorf("reasonix.toml must win a collision with .mcp.json: %+v", p)
	}
	if p := byName["fromuser"]; p.Command != "mcp-json-beats-user" || p.Source != mcp {
		t.Errorf(".mcp.json must win over the user config: %+v", p)
	}
	if p := byName["stripe"]; p.Type != "http" || p.Headers["Authorization"] != "Bearer sk" {
		t.Errorf("stripe = %+v", p)
	}
	if p := byName["files"]; p.Type != "stdio" || p.Args[2] != "${REASONIX_WORKSPACE_ROOT}" || p.Env["DEBUG"] != "1" {
		t.Errorf("files = %+v", p)
	}
	if p := byName["stream"]; p.Type != "http" {
		t.Errorf("streamable-http must map to http: %+v", p)
	}
	if !slices.Contains(c.Sources(), mcp) {
		t.Errorf("Sources %q lacks %s", c.Sources(), mcp)
	}

	o := f.opts()
	o.SkipMCPJSON = true
	c, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plugins) != 3 || slices.Contains(c.Sources(), mcp) {
		t.Errorf("SkipMCPJSON still read .mcp.json: %d plugins, sources %q", len(c.Plugins), c.Sources())
	}
}

func TestLoadMCPJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"syntax", "{\n  \"mcpServers\": {\n    \"x\": { \"command\": }\n  }\n}", []string{"line 3", "invalid character"}},
		{"type", "{\"mcpServers\": {\"x\": {\"args\": \"not-a-list\"}}}", []string{"line 1", "cannot unmarshal"}},
		{"invalid server", "{\"mcpServers\": {\"x\": {\"type\": \"http\"}}}", []string{"plugins[x].url: is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			mcp := f.write(filepath.Join(f.project, MCPJSONFile), tc.doc)
			wantContains(t, f.loadErr(), append(tc.want, "config: "+mcp+": ")...)
		})
	}
}
