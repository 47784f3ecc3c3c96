package mcptest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/mcp"
	"reasonix/mcp/mcptest"
)

const longName = "get_the_pull_request_review_comments_of_a_repository_in_an_organization"

// TestAdaptedHTTPToolsKeepTheToolContract runs the tool conformance suite
// over tools adapted from a streamable HTTP server, the transport the mcp
// package's own conformance test (over stdio) does not use.
func TestAdaptedHTTPToolsKeepTheToolContract(t *testing.T) {
	release := make(chan struct{})
	sc := mcptest.NewHTTPServer(t, "fake",
		mcptest.Tool{Name: "look", Description: "Echoes its arguments.", ReadOnly: true},
		mcptest.Tool{Name: "wait", Description: "Waits until the call is cancelled.", ReadOnly: true,
			Handle: func(ctx context.Context, _ map[string]any) (string, error) {
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-release:
					return "", errors.New("released at the end of the test")
				}
			}},
		mcptest.Tool{Name: "store", Description: "Pretends to store its arguments.",
			Handle: func(context.Context, map[string]any) (string, error) { return "stored", nil }},
		// Real servers have long names; the adapted name must still fit
		// every model API.
		mcptest.Tool{Name: longName, Description: "Has a long name.", ReadOnly: true},
	)
	// The HTTP server cannot close while a handler runs. Once in about
	// forty runs a cancelled call's handler never saw its cancellation
	// (the client had given up, the server went on), and the test hung in
	// cleanup; such a handler is let go when the test ends.
	t.Cleanup(func() { close(release) })
	m, err := mcp.New(mcp.Config{Servers: []mcp.ServerConfig{sc}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	_ = m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cases := map[string]agenttest.ToolCases{
		"mcp__fake__look":              {ReadOnly: true, Valid: []string{`{"q":"x"}`, `{"n":[1,2]}`}},
		"mcp__fake__wait":              {ReadOnly: true, Blocking: `{}`},
		"mcp__fake__store":             {Valid: []string{`{"k":"v"}`}},
		mcp.ToolName("fake", longName): {ReadOnly: true, Valid: []string{`{"q":"x"}`}},
	}
	tools := map[string]agent.Tool{}
	for _, tl := range m.Tools(nil) {
		tools[tl.Name()] = tl
	}
	for name, c := range cases {
		tl, ok := tools[name]
		if !ok {
			t.Errorf("tool %s is not offered", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			agenttest.TestTool(t, func(*testing.T) agent.Tool { return tl }, c)
		})
	}
}
