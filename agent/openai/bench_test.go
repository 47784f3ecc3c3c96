package openai

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// BenchmarkStreamTurn measures one full round trip over a kept-alive
// connection: encode, POST, stream a small tool-call turn, decode.
func BenchmarkStreamTurn(b *testing.B) {
	turn := agenttest.Turn{
		Text:      "Reading the file.",
		ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`}},
		Usage:     agent.Usage{Prompt: 120, Completion: 20, Cached: 64},
	}
	srv := agenttest.StartServer(nil)
	defer srv.Close()
	p, _ := newTestProvider(b, srv.ProviderConfig())
	req := agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You are a coding agent."}, {Role: agent.RoleUser, Content: "read main.go"}},
		Tools:    []agent.ToolSchema{{Name: "read_file", Description: "read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		srv.Add(turn)
		b.StartTimer()
		got := agenttest.Collect(b, p, req)
		if got.Final.Type != agent.ChunkDone || len(got.Calls) != 1 {
			b.Fatalf("final %+v", got.Final)
		}
	}
}
