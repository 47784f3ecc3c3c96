package agenttest

import (
	"encoding/json"
	"strings"

	"reasonix/agent"
)

// Windowed makes h a model with a context window of window tokens: a
// request larger than that fails as a real model's would (ContextTooLong),
// and an answer without usage reports the prompt's size (PromptTokens) and
// a completion of a quarter of its text, so a client's compaction is
// exercised against the same limits it would meet. Use it with Respond.
func Windowed(window int, h func(Request) Turn) func(Request) Turn {
	return func(r Request) Turn {
		n := PromptTokens(r)
		if n > window {
			return ContextTooLong()
		}
		t := h(r)
		if t.Usage == (agent.Usage{}) && t.Status == 0 && t.Raw == "" {
			out := len(t.Text)
			for _, c := range t.ToolCalls {
				out += len(c.Name) + len(c.Arguments)
			}
			t.Usage = agent.Usage{Prompt: n, Completion: max(out/4, 1)}
		}
		return t
	}
}

// PromptTokens counts a request as Windowed does: four bytes of the raw
// body a token, or for ScriptedProvider (which has no body) of the JSON of
// its messages and tools.
func PromptTokens(r Request) int {
	body := r.Body
	if body == nil {
		body, _ = json.Marshal(struct {
			Messages []agent.Message
			Tools    []agent.ToolSchema
		}{r.Messages, r.Tools})
	}
	return len(body) / 4
}

// IsSummary reports whether r is an agent's compaction summary call rather
// than a step of the conversation: no tools, and a user message holding
// the conversation to condense.
func IsSummary(r Request) bool {
	if len(r.Tools) > 0 || len(r.Messages) == 0 {
		return false
	}
	last := r.Messages[len(r.Messages)-1]
	return last.Role == agent.RoleUser && strings.Contains(last.Content, "<conversation>")
}
