package agenttest

import (
	"testing"

	"reasonix/agent"
)

// BenchTurn measures one step of a coding agent on p, b.N times: a small
// request with a system prompt and one tool, streamed and read to its end.
// Every answer must end done with calls tool calls. before, when not nil,
// runs untimed ahead of each request, e.g. to script the fake server.
func BenchTurn(b *testing.B, p agent.Provider, calls int, before func()) {
	req := agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You are a coding agent."}, {Role: agent.RoleUser, Content: "read main.go"}},
		Tools:    []agent.ToolSchema{{Name: "read_file", Description: "read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		got := Collect(b, p, req)
		if got.Final.Type != agent.ChunkDone || len(got.Calls) != calls {
			b.Fatalf("final %+v after %d calls, want done after %d", got.Final, len(got.Calls), calls)
		}
	}
}
