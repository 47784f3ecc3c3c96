package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspacePlugins(t *testing.T) {
	dir := t.TempDir()
	if got, err := WorkspacePlugins(dir, nil); err != nil || got != nil {
		t.Fatalf("no .mcp.json: %v, %v", got, err)
	}
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers":{"docs":{"command":"${TOOLS}/docs-mcp","args":["--root","${REASONIX_WORKSPACE_ROOT}"]},
		"remote":{"type":"streamable-http","url":"https://mcp.example.com","headers":{"Authorization":"Bearer ${TOKEN:-none}"}}}}`)
	env := lookupFrom(map[string]string{"TOOLS": "/opt/tools"})
	got, err := WorkspacePlugins(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "docs" || got[0].Command != "/opt/tools/docs-mcp" || got[0].Type != TransportStdio ||
		got[0].Args[1] != "${REASONIX_WORKSPACE_ROOT}" || got[1].Type != TransportHTTP || got[1].Headers["Authorization"] != "Bearer none" {
		t.Errorf("plugins = %+v", got)
	}
	write(`{"mcpServers":{"bad":{"type":"http"}}}`)
	if _, err := WorkspacePlugins(dir, env); err == nil || !strings.Contains(err.Error(), "url") || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("invalid server: %v", err)
	}
	write(`{"mcpServers":`)
	if _, err := WorkspacePlugins(dir, env); err == nil || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("malformed file: %v", err)
	}
}
