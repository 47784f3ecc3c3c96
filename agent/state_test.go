package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"reasonix/agent"
)

// A provider's opaque state travels on the assistant message into the next
// request, and survives a JSON round trip of the transcript.
func TestProviderStateCarriedToNextRequest(t *testing.T) {
	echo := &fakeTool{name: "echo", fn: func(context.Context, json.RawMessage) (string, error) { return "ok", nil }}
	state := json.RawMessage(`[{"type":"reasoning","encrypted_content":"gAAA"}]`)
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		func(agent.Request) []agent.Chunk {
			return []agent.Chunk{
				{Type: agent.ChunkToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "echo", Arguments: `{}`}},
				{Type: agent.ChunkDone, FinishReason: "tool_calls", ProviderState: state},
			}
		},
		say("done"),
	}}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, echo), Gate: allowAll})
	if res := a.Run(context.Background(), "go"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("result = %+v", res)
	}
	msgs := p.requests[1].Messages
	asst := msgs[len(msgs)-2]
	if asst.Role != agent.RoleAssistant || string(asst.ProviderState) != string(state) {
		t.Fatalf("assistant message = %+v", asst)
	}
	raw, _ := json.Marshal(asst)
	var back agent.Message
	if err := json.Unmarshal(raw, &back); err != nil || string(back.ProviderState) != string(state) {
		t.Fatalf("round trip: %s -> %+v (%v)", raw, back, err)
	}
	var old agent.Message
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":"hi"}`), &old); err != nil || old.ProviderState != nil {
		t.Fatalf("an old transcript entry: %+v (%v)", old, err)
	}
}
