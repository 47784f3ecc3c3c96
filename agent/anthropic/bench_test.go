package anthropic

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// BenchmarkStreamTurn measures one round trip over a kept-alive connection:
// encode, POST, stream a small text-and-tool-call turn, decode. It mirrors
// the openai package's benchmark of the same name, so the two compare.
func BenchmarkStreamTurn(b *testing.B) {
	api := agenttest.NewReplayServer(b, agenttest.Recorded(b, "bench.sse"))
	p, _ := newTestProvider(b, config(api))
	req := agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You are a coding agent."}, {Role: agent.RoleUser, Content: "read main.go"}},
		Tools:    []agent.ToolSchema{{Name: "read_file", Description: "read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	b.ReportAllocs()
	for b.Loop() {
		got := agenttest.Collect(b, p, req)
		if got.Final.Type != agent.ChunkDone || len(got.Calls) != 1 {
			b.Fatalf("final %+v", got.Final)
		}
	}
}
