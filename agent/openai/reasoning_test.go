package openai

import (
	"testing"

	"reasonix/agent/agenttest"
)

// reasoning_content (DeepSeek's reasoner, vLLM) streams as ChunkThinking
// before the answer and is not part of it.
func TestReasoningContentStreamsAsThinking(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Thinking: "first check the tests", Text: "they pass", FinishReason: "length"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	got.WantDone(t, "length")
	if got.Thinking != "first check the tests" || got.Text != "they pass" {
		t.Errorf("thinking %q text %q", got.Thinking, got.Text)
	}
}
