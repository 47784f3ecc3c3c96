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
	agenttest.BenchTurn(b, p, 1, func() { srv.Add(turn) })
}
