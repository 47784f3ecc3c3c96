package acp

import (
	"strings"
	"testing"

	"reasonix/agent/agenttest"
)

func TestReasoningStreamsAsThoughtChunks(t *testing.T) {
	c := newClient(t, agenttest.Turn{Thinking: "the user wants a greeting", Text: "hello"})
	c.initialize()
	id := c.newSession(t.TempDir())
	if got := c.prompt(id, "greet me"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_thought_chunk"); got != "the user wants a greeting" {
		t.Errorf("thought %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); got != "hello" {
		t.Errorf("answer %q", got)
	}
	ks := strings.Join(kinds(c.seen(id)), ",")
	if strings.Index(ks, "agent_thought_chunk") > strings.Index(ks, "agent_message_chunk") {
		t.Errorf("the thought came after the answer: %s", ks)
	}
	// A reload replays the conversation, which never held the reasoning.
	c.call("session/close", map[string]string{"sessionId": id}, nil)
	before := len(c.seen(id))
	c.call("session/load", map[string]any{"sessionId": id, "cwd": t.TempDir(), "mcpServers": []any{}}, nil)
	for _, u := range c.seen(id)[before:] {
		if u.Kind == "agent_thought_chunk" || strings.Contains(string(u.Raw), "wants a greeting") {
			t.Errorf("the replay carries the reasoning: %s", u.Raw)
		}
	}
}

func TestStopReasonsFromTheFinishReason(t *testing.T) {
	c := newClient(t,
		agenttest.Turn{Text: "a long answer that was cut", FinishReason: "length"},
		agenttest.Turn{Text: "I can't help with that.", FinishReason: "content_filter"},
		agenttest.Turn{Text: "fine"},
	)
	c.initialize()
	id := c.newSession(t.TempDir())
	for _, want := range []string{"max_tokens", "refusal", "end_turn"} {
		if got := c.prompt(id, "go"); got != want {
			t.Errorf("stop reason %q, want %q", got, want)
		}
	}
}

// TestGoalStopReasonsFromTheFinishReason: a goal turn whose last answer
// hit the output limit or was refused says so, as a plain turn does.
func TestGoalStopReasonsFromTheFinishReason(t *testing.T) {
	for finish, want := range map[string]string{"length": "max_tokens", "content_filter": "refusal", "stop": "end_turn"} {
		t.Run(finish, func(t *testing.T) {
			model := agenttest.Turn{Handler: func(r agenttest.Request) agenttest.Turn {
				turn := goalModel(t).Handler(r)
				if len(turn.ToolCalls) == 0 {
					turn.FinishReason = finish
				}
				return turn
			}}
			c := newClient(t, model, model)
			c.initialize()
			id := c.newSession(t.TempDir())
			c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
			if got := c.prompt(id, "make sure the tree is clean"); got != want {
				t.Errorf("stop reason %q, want %q", got, want)
			}
		})
	}
}
