package mcp

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"reasonix/agent"
)

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "do thing", "mcp__my_server__do_thing"},
		{"fs", "files.read/v2", "mcp__fs__files_read_v2"},
		{"x-y", "ünï", "mcp__x-y___n_"},
		// Cut to 64 with a hash of the whole, which keeps similar long names apart.
		{"github", strings.Repeat("long_", 12) + "a", "mcp__github__long_long_long_long_long_long_long_long_lo_70354759"},
		{"github", strings.Repeat("long_", 12) + "b", "mcp__github__long_long_long_long_long_long_long_long_lo_386d685d"},
	} {
		if got := ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
}

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"echo", "a b", "files.read", "日本", "\x00", ""} {
		f.Add("srv", s)
	}
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := ToolName(server, tool)
		if !validToolName.MatchString(got) || !strings.HasPrefix(got, "mcp__") {
			t.Fatalf("ToolName(%q, %q) = %q is not a valid tool name", server, tool, got)
		}
	})
}

func TestHintsMapping(t *testing.T) {
	srv := &server{cfg: ServerConfig{Name: "s"}}
	for _, tc := range []struct {
		name            string
		ann             *sdk.ToolAnnotations
		ro, destructive bool
	}{
		{"no annotations", nil, false, true},
		{"read only", &sdk.ToolAnnotations{ReadOnlyHint: true}, true, false},
		{"read only, claims destructive", &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: new(true)}, true, false},
		{"writer, not destructive", &sdk.ToolAnnotations{DestructiveHint: new(false)}, false, false},
		{"writer, destructive", &sdk.ToolAnnotations{DestructiveHint: new(true)}, false, true},
	} {
		tl := newTool(srv, &sdk.Tool{Name: "t", Annotations: tc.ann}, nil)
		if tl.ReadOnly() != tc.ro || tl.Destructive() != tc.destructive || agent.IsReadOnly(tl) != tc.ro {
			t.Errorf("%s: ReadOnly=%v Destructive=%v, want %v/%v", tc.name, tl.ReadOnly(), tl.Destructive(), tc.ro, tc.destructive)
		}
	}
	if d := newTool(srv, &sdk.Tool{Name: "t", Title: "Nice title"}, nil).Description(); d != "Nice title" {
		t.Errorf("description falls back to the title: got %q", d)
	}
}

func TestObjectSchema(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, `{"properties":{},"type":"object"}`},
		{map[string]any{}, `{"properties":{},"type":"object"}`},
		{map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{map[string]any{"type": "string"}, `{"properties":{},"type":"object"}`},
		{json.RawMessage(`{"type":"object","required":["x"],"properties":{"x":{}}}`),
			`{"properties":{"x":{}},"required":["x"],"type":"object"}`},
		{json.RawMessage(`[1,2]`), `{"properties":{},"type":"object"}`},
	} {
		got, err := agent.CanonicalSchema(objectSchema(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("objectSchema(%v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func FuzzObjectSchema(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"type":"object"}`, `{"type":["object","null"]}`, `[]`, `"x"`, `{"properties":1}`, `{"type":"object","properties":{"a":{"type":"integer"}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		schema := objectSchema(json.RawMessage(raw))
		if _, err := agent.CanonicalSchema(schema); err != nil {
			t.Fatalf("objectSchema(%q) = %s is rejected by the registry: %v", raw, schema, err)
		}
	})
}

func FuzzObjectArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"a":1}`, `[1]`, `"x"`, `{`, ` {"a": [1, 2]} `, `{"":1E700}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := objectArgs(json.RawMessage(raw))
		if err != nil {
			return
		}
		// Raw values: a number beyond float64 (1E700) is still valid JSON.
		var obj map[string]json.RawMessage
		if json.Unmarshal(out, &obj) != nil || obj == nil {
			t.Fatalf("objectArgs(%q) accepted %q, which is not a JSON object", raw, out)
		}
	})
}

func TestResultText(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "first"},
		&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3)},
		&sdk.ResourceLink{URI: "file:///a", Name: "a"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://t", Text: "inline"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: make([]byte, 4)}},
		&sdk.TextContent{Text: "last"},
	}}
	want := "first\n[image image/png, 10 bytes]\n[audio audio/wav, 3 bytes]\n[resource link file:///a a]\n" +
		"[resource mem://t]\ninline\n[resource mem://b application/zip, 4 bytes]\nlast"
	if got := resultText(res); got != want {
		t.Errorf("resultText =\n%s\nwant\n%s", got, want)
	}
	structured := &sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}}
	if got := resultText(structured); got != `{"n":1}` {
		t.Errorf("structured-only result = %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := ServerConfig{Name: "a", Command: "x"}
	for _, tc := range []struct {
		name string
		s    ServerConfig
		want string
	}{
		{"empty name", ServerConfig{Command: "x"}, "name is empty"},
		{"double underscore", ServerConfig{Name: "a__b", Command: "x"}, `must not contain "__"`},
		{"no command", ServerConfig{Name: "a"}, "command is empty"},
		{"bad type", ServerConfig{Name: "a", Type: "ws", URL: "http://x"}, `type "ws"`},
		{"relative url", ServerConfig{Name: "a", Type: TypeHTTP, URL: "/mcp"}, "absolute http or https URL"},
		{"bad concurrency", ServerConfig{Name: "a", Command: "x", Concurrency: "wild"}, `concurrency "wild"`},
		{"bad tool timeout", ServerConfig{Name: "a", Command: "x", ToolTimeouts: map[string]time.Duration{"t": 0}}, "must be positive"},
	} {
		_, err := New(Config{Servers: []ServerConfig{tc.s}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := New(Config{Servers: []ServerConfig{ok, ok}}); err == nil || !strings.Contains(err.Error(), "used twice") {
		t.Errorf("duplicate names: %v", err)
	}
	secret := ServerConfig{Name: "a", Type: TypeSSE, URL: "ftp://user:tok3n@host"}
	if _, err := New(Config{Servers: []ServerConfig{secret}}); err == nil || strings.Contains(err.Error(), "tok3n") {
		t.Errorf("an invalid url must be refused without echoing it: %v", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	m, err := New(Config{
		WorkspaceRoot: "/ws",
		Servers: []ServerConfig{
			{Name: "plain", Command: "${REASONIX_WORKSPACE_ROOT}/bin/srv", Args: []string{"--root=${CLAUDE_PROJECT_DIR}", "${HOME}", "${CLAUDE_PROJECT_DIR:-.}/x", "${"},
				Env: map[string]string{"ROOT": "${REASONIX_WORKSPACE_ROOT}"}},
			{Name: "Playwright", Command: "x", StartupTimeout: time.Second, CallTimeout: 2 * time.Second,
				ToolTimeouts: map[string]time.Duration{"render": time.Hour}},
			{Name: "web", Type: "streamable-http", URL: "https://x.example/${REASONIX_WORKSPACE_ROOT}"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, pw, web := m.servers[0], m.servers[1], m.servers[2]
	if plain.cfg.Type != TypeStdio || plain.sem != nil || plain.cfg.StartupTimeout != DefaultStartupTimeout || plain.cfg.callTimeout("any") != DefaultCallTimeout {
		t.Errorf("plain defaults wrong: %+v", plain.cfg)
	}
	if plain.cfg.Command != "/ws/bin/srv" || plain.cfg.Args[0] != "--root=/ws" || plain.cfg.Args[1] != "${HOME}" || plain.cfg.Args[2] != "/ws/x" ||
		plain.cfg.Args[3] != "${" || plain.cfg.Env["ROOT"] != "/ws" {
		t.Errorf("workspace expansion wrong: %+v", plain.cfg)
	}
	if pw.sem == nil || pw.cfg.Concurrency != Serial {
		t.Error("a playwright server must default to serial")
	}
	if pw.cfg.StartupTimeout != time.Second || pw.cfg.callTimeout("other") != 2*time.Second || pw.cfg.callTimeout("render") != time.Hour {
		t.Errorf("per-server/per-tool timeouts wrong: %+v", pw.cfg)
	}
	if web.cfg.Type != TypeHTTP || web.cfg.URL != "https://x.example//ws" {
		t.Errorf("web = %+v", web.cfg)
	}
}

func TestDefaultConcurrency(t *testing.T) {
	for name, want := range map[string]string{
		"browser": Serial, "my-Playwright": Serial, "puppeteer": Serial, "chrome-devtools": Serial,
		"chromium": Serial, "selenium-grid": Serial, "github": Parallel, "fs": Parallel,
	} {
		if got := DefaultConcurrency(name); got != want {
			t.Errorf("DefaultConcurrency(%q) = %s, want %s", name, got, want)
		}
	}
}
