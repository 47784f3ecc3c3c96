package agent_test

import (
	"strings"
	"testing"

	"reasonix/agent"
)

// The model's reasoning reaches Config.Thinking as it streams, never the
// answer or the conversation; the final reply's finish reason is the
// result's.
func TestThinkingIsShownAndTheFinishReasonKept(t *testing.T) {
	p := &script{replies: []func(agent.Request) []agent.Chunk{func(agent.Request) []agent.Chunk {
		return []agent.Chunk{
			{Type: agent.ChunkThinking, Text: "maybe "},
			{Type: agent.ChunkThinking, Text: "this"},
			{Type: agent.ChunkText, Text: "cut off"},
			{Type: agent.ChunkDone, FinishReason: "length"},
		}
	}}}
	var thought strings.Builder
	a := newAgent(t, agent.Config{Provider: p, Thinking: func(s string) { thought.WriteString(s) }})
	res := a.Run(t.Context(), "go")
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "cut off" || res.FinishReason != "length" {
		t.Fatalf("result %+v", res)
	}
	if thought.String() != "maybe this" {
		t.Errorf("thinking %q", thought.String())
	}
	for _, m := range a.Messages() {
		if strings.Contains(m.Content, "maybe") {
			t.Errorf("the reasoning joined the conversation: %+v", m)
		}
	}
}
