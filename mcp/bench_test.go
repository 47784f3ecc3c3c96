package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkCallStdio measures one tools/call round trip over stdio to the
// example plugin's echo tool, through the adapted agent.Tool.
func BenchmarkCallStdio(b *testing.B) {
	m, _ := startManager(b, Config{Servers: []ServerConfig{exampleServer("ex", false)}})
	echo := toolByName(b, m, "mcp__ex__echo")
	args := json.RawMessage(`{"text":"ping"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := echo.Execute(ctx, args)
		if err != nil || out != "ping" {
			b.Fatalf("echo = %q, %v", out, err)
		}
	}
}
