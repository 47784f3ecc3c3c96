package anthropic

import (
	"encoding/json"

	"reasonix/agent"
)

// Extended thinking (the Messages API's reasoning). An effort turns it on
// with a token budget; the thinking blocks of an answer must then go back,
// unchanged and first, in that assistant turn on every later request (the
// API refuses a tool-use turn without them), so they travel in the
// message's ProviderState like the Responses API's reasoning items.

// thinkingBudgets maps an effort to budget_tokens. The API's minimum is
// 1024; each level roughly doubles the one below.
var thinkingBudgets = map[string]int{
	agent.EffortMinimal: 1024,
	agent.EffortLow:     4096,
	agent.EffortMedium:  8192,
	agent.EffortHigh:    16384,
	agent.EffortMax:     32768,
}

// ThinkingBudget is the budget_tokens an effort asks for; 0 for "" or an
// unknown word (no thinking).
func ThinkingBudget(effort string) int { return thinkingBudgets[effort] }

// thinkingConfig is the request's thinking object.
type thinkingConfig struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int    `json:"budget_tokens"`
}

// maxThinkingBytes bounds the thinking one answer may make the decoder
// hold (it is not part of the answer, so max_output_bytes does not count
// it). A budget of 32768 tokens is far below it.
const maxThinkingBytes = 32 << 20

// thinkingState is what this provider keeps in agent.Message.ProviderState.
type thinkingState struct {
	Kind   string  `json:"kind"` // always Kind, so the owner is recognisable
	Blocks []block `json:"thinking"`
}

func encodeThinking(blocks []block) json.RawMessage {
	if len(blocks) == 0 {
		return nil
	}
	raw, err := json.Marshal(thinkingState{Kind: Kind, Blocks: blocks})
	if err != nil {
		return nil // plain strings; cannot happen
	}
	return raw
}

// thinkingBlocks unpacks encodeThinking's result. State another provider
// wrote, or damaged state, or a block of another type, is left out: the
// blocks only matter to the model that wrote them.
func thinkingBlocks(raw json.RawMessage) []block {
	if len(raw) == 0 {
		return nil
	}
	var s thinkingState
	if json.Unmarshal(raw, &s) != nil || s.Kind != Kind {
		return nil
	}
	out := s.Blocks[:0]
	for _, b := range s.Blocks {
		if b.Type == "thinking" && b.Thinking != nil || b.Type == "redacted_thinking" && b.Data != "" {
			out = append(out, block{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data})
		}
	}
	return out
}
