package anthropic

import (
	"testing"

	"reasonix/agent"
)

// BenchmarkStreamTurn measures one round trip over a kept-alive connection:
// encode, POST, stream a small text-and-tool-call turn, decode. It mirrors
// the openai package's benchmark of the same name, so the two compare.
func BenchmarkStreamTurn(b *testing.B) {
	api := newFakeAPI(b, recorded(b, "bench.sse"))
	p, _ := newTestProvider(b, api.config())
	req := agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You are a coding agent."}, {Role: agent.RoleUser, Content: "read main.go"}},
		Tools:    []agent.ToolSchema{{Name: "read_file", Description: "read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	b.ReportAllocs()
	for b.Loop() {
		got := mustStream(b, p, req)
		if got.final.Type != agent.ChunkDone || len(got.calls) != 1 {
			b.Fatalf("final %+v", got.final)
		}
	}
}
