package responses

import (
	"testing"

	"reasonix/agent/agenttest"
)

// BenchmarkStreamTurn measures one round trip over a kept-alive connection:
// encode, POST, stream a small text-and-tool-call turn, decode. The openai
// package's benchmark of the same name runs the same step, so they compare.
func BenchmarkStreamTurn(b *testing.B) {
	p, _ := newTestProvider(b, config(agenttest.NewReplayServer(b, agenttest.Recorded(b, "bench.sse"))))
	agenttest.BenchTurn(b, p, 1, nil)
}
