package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

const historyMaxLimit = 20

func init() {
	agent.RegisterBuiltin("history", func(env agent.ToolEnv) agent.Tool {
		if env.History == nil {
			return nil
		}
		return &historyTool{h: env.History}
	})
}

// historyTool searches past tasks of the workspace (BM25 over what they
// were asked and what they answered).
type historyTool struct{ h agent.History }

var _ agent.ReadOnlyTool = (*historyTool)(nil)

func (*historyTool) Name() string   { return "history" }
func (*historyTool) ReadOnly() bool { return true }
func (*historyTool) Description() string {
	return "Search past tasks of this workspace by words (what they were asked and what they reported), best match first, " +
		"each with the passage that matched. Use rare, specific words; read a hit in full with read_session."
}

func (*historyTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "Words to search for."},
    "limit": {"type": "integer", "description": "At most this many tasks (default 5, at most 20)."}
  },
  "required": ["query"],
  "additionalProperties": false
}`)
}

func (t *historyTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs("history", raw, &a, "query"); err != nil {
		return "", err
	}
	if a.Query = strings.TrimSpace(a.Query); a.Query == "" {
		return "", fmt.Errorf("history: query is empty; name the words to look for (list_sessions lists tasks without one)")
	}
	limit, err := boundLimit("history", a.Limit, 5, historyMaxLimit)
	if err != nil {
		return "", err
	}
	hits, err := t.h.Search(ctx, a.Query, limit)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if len(hits) == 0 {
		return "No past task matches. Try rarer or different words, or list_sessions to browse.", nil
	}
	var b strings.Builder
	for _, h := range hits {
		writeSessionLine(&b, h.Info)
		if h.Excerpt != "" {
			b.WriteString("  … " + oneLine(h.Excerpt, 300) + "\n")
		}
	}
	return b.String(), nil
}
