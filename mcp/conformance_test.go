package mcp

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// exampleConformance holds the agent.Tool contract cases of the example
// plugin's tools as the adapter presents them. crash is left out on
// purpose: every call of it, even with no arguments, kills the server.
var exampleConformance = map[string]agenttest.ToolCases{
	"echo": {
		ReadOnly: true,
		Valid:    []string{`{"text":"héllo wörld"}`, `{"text":"two\nlines"}`},
		Invalid:  []string{`{"text":1}`},
	},
	"wordcount": {
		ReadOnly: true,
		Valid:    []string{`{"text":"one two\nthree"}`, `{"text":"x"}`},
		Invalid:  []string{`{"text":["a"]}`},
	},
	// slow reports how many calls overlapped it, so its result is not
	// deterministic under concurrency: it has only a blocking case.
	"slow": {
		ReadOnly: true,
		Invalid:  []string{`{"millis":"soon"}`},
		Blocking: `{"millis":600000}`,
	},
	"progress": {
		Valid:   []string{`{"steps":2}`},
		Invalid: []string{`{"steps":"two"}`},
	},
	"fail": {
		Invalid: []string{`{}`},
	},
}

// TestAdaptedToolsKeepTheToolContract runs the tool conformance suite over
// the example plugin's tools, adapted from a live stdio server. Every tool
// the plugin offers needs an entry (or a reason to be left out), so a new
// test tool cannot skip the suite.
func TestAdaptedToolsKeepTheToolContract(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", true)}})
	for _, tl := range m.Tools(nil) {
		remote := tl.RemoteName()
		if remote == "crash" {
			continue
		}
		cases, ok := exampleConformance[remote]
		if !ok {
			t.Errorf("the example plugin's tool %q has no conformance cases: add it to the table", remote)
			continue
		}
		t.Run(remote, func(t *testing.T) {
			// One server for all subtests: a tool is a handle on a shared
			// connection, and starting a process per subtest is slow.
			agenttest.TestTool(t, func(t *testing.T) agent.Tool { return toolByName(t, m, tl.Name()) }, cases)
		})
	}
}
