package agent_test

import (
	"context"
	"strings"
	"testing"

	"reasonix/agent"
)

// TestRecallGoesAfterTheUserMessage: what Recall finds for a user message
// (the first and a steered one) is appended to that message, while the
// system prompt — the start of the cached prefix — is the same bytes in
// every request.
func TestRecallGoesAfterTheUserMessage(t *testing.T) {
	p := &script{replies: []func(agent.Request) []agent.Chunk{say("one"), say("two")}}
	var asked []string
	a := newAgent(t, agent.Config{Provider: p, SystemPrompt: "be brief", Recall: func(_ context.Context, text string) string {
		asked = append(asked, text)
		if strings.Contains(text, "tests") {
			return "<memory>tests run with make check</memory>"
		}
		return ""
	}})
	a.Steer("and the lint tests")
	if res := a.Run(context.Background(), "run the tests"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("result = %+v", res)
	}
	if res := a.Run(context.Background(), "thanks"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("second run = %+v", res)
	}
	if strings.Join(asked, "|") != "run the tests|and the lint tests|thanks" {
		t.Errorf("Recall was asked %q", asked)
	}
	first := p.requests[0].Messages
	if len(first) != 3 || first[0].Content != "be brief" || first[1].Content != "run the tests\n\n<memory>tests run with make check</memory>" ||
		first[2].Content != "and the lint tests\n\n<memory>tests run with make check</memory>" {
		t.Errorf("first request = %+v", first)
	}
	second := p.requests[1].Messages
	if second[0].Content != "be brief" || second[1].Content != first[1].Content || second[len(second)-1].Content != "thanks" {
		t.Errorf("second request = %+v", second)
	}
}
