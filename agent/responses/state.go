package responses

import "encoding/json"

// state is what this provider keeps in agent.Message.ProviderState: the
// reasoning items of one response, exactly as the server sent them. They
// are opaque (encrypted) and go back unchanged on the next request.
type state struct {
	Kind      string            `json:"kind"` // always Kind, so the owner is recognisable
	Reasoning []json.RawMessage `json:"reasoning"`
}

// encodeState packs reasoning items for the assistant message; nil when
// there are none, so messages without reasoning stay unchanged.
func encodeState(items []json.RawMessage) json.RawMessage {
	if len(items) == 0 {
		return nil
	}
	raw, err := json.Marshal(state{Kind: Kind, Reasoning: items})
	if err != nil {
		return nil // the items were valid JSON when decoded; cannot happen
	}
	return raw
}

// reasoningItems unpacks encodeState's result. State written by another
// provider, or damaged, is ignored: reasoning is an optimisation, and the
// conversation is complete without it.
func reasoningItems(raw json.RawMessage) []json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var s state
	if json.Unmarshal(raw, &s) != nil || s.Kind != Kind {
		return nil
	}
	return s.Reasoning
}
