package acp

import (
	"path/filepath"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/session"
)

// BenchmarkFirstSession is initialize and the first session/new in
// process (without the binary's start and config load, which
// cmd/reasonix's BenchmarkACPFirstSession adds): what the agent does for
// a first session, for profiling (-cpuprofile).
func BenchmarkFirstSession(b *testing.B) {
	prov := agenttest.NewScriptedProvider()
	work := b.TempDir()
	for b.Loop() {
		dir := b.TempDir()
		c := newClientWith(b, Config{
			Settings: config.Default(),
			Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
			Dir:      filepath.Join(dir, "sessions"),
		})
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
		var res map[string]any
		c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}}, &res)
		if res["sessionId"] == nil {
			b.Fatal("no session")
		}
	}
}
