package runner

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"reasonix/config"
	"reasonix/runner/store"
)

func TestTaskPluginsFromTheWorkspaceNeedBothSwitches(t *testing.T) {
	dir := t.TempDir()
	err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{
		"repo-tool":{"command":"repo-mcp"},
		"shared":{"command":"the-repo-would-like-this-one"}}}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []config.Plugin) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[p.Name] = p.Command
		}
		return m
	}
	service := func(allow, optIn bool) *Service {
		set := config.Default()
		set.Plugins = []config.Plugin{{Name: "shared", Type: "stdio", Command: "service-mcp"}}
		set.Serve.AllowWorkspacePlugins = allow
		set.Workspaces = []config.Workspace{{Name: "app", Repo: dir, PluginsFromWorkspace: optIn}}
		return &Service{set: set, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	task := store.Task{ID: "t1", Workspace: "app"}
	for _, tc := range []struct {
		allow, optIn bool
		want         int
	}{{false, false, 1}, {true, false, 1}, {false, true, 1}, {true, true, 2}} {
		got := names(service(tc.allow, tc.optIn).taskPlugins(task, dir))
		if len(got) != tc.want || got["shared"] != "service-mcp" {
			t.Errorf("allow=%v opt-in=%v: %v", tc.allow, tc.optIn, got)
		}
	}
	if got := names(service(true, true).taskPlugins(store.Task{ID: "t2"}, dir)); len(got) != 1 {
		t.Errorf("a task without a workspace got %v", got)
	}
}
