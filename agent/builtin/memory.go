package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

// memoryMaxLimit bounds one listing: memories are short, but a listing is
// part of the conversation from then on.
const memoryMaxLimit = 50

func init() {
	agent.RegisterBuiltin("memory", func(env agent.ToolEnv) agent.Tool {
		if env.Memory == nil {
			return nil
		}
		return &memoryTool{mem: env.Memory}
	})
}

// memoryTool searches and lists the remembered facts of the run's scopes.
type memoryTool struct{ mem agent.Memory }

var _ agent.ReadOnlyTool = (*memoryTool)(nil)

func (*memoryTool) Name() string   { return "memory" }
func (*memoryTool) ReadOnly() bool { return true }
func (*memoryTool) Description() string {
	return "Search the facts earlier tasks remembered for this workspace and for the person who asked (newest first without a query). " +
		"Use it before remember, to avoid saving a fact twice, and when a task depends on how the team works. " +
		"For what a past task actually did or said, use history instead."
}

func (*memoryTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "Words to search for; empty lists the newest memories."},
    "limit": {"type": "integer", "description": "At most this many memories (default 10, at most 50)."}
  },
  "additionalProperties": false
}`)
}

func (t *memoryTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs("memory", raw, &a); err != nil {
		return "", err
	}
	limit, err := boundLimit("memory", a.Limit, 10, memoryMaxLimit)
	if err != nil {
		return "", err
	}
	got, err := t.mem.Search(ctx, strings.TrimSpace(a.Query), limit)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	if len(got) == 0 {
		if a.Query != "" {
			return "No memory matches. Try rarer words, list the newest without a query, or search past tasks with history.", nil
		}
		return "Nothing is remembered yet.", nil
	}
	var b strings.Builder
	for _, e := range got {
		fmt.Fprintf(&b, "%s [%s] %s (by %s, %s)\n", e.ID, e.Scope, e.Text, e.By, e.At.UTC().Format("2006-01-02"))
	}
	return b.String(), nil
}

// boundLimit applies a listing tool's default and refuses a limit outside
// [1, max] with an error naming the bound.
func boundLimit(tool string, limit, def, max int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 0 || limit > max:
		return 0, fmt.Errorf("%s: limit must be between 1 and %d, got %d", tool, max, limit)
	}
	return limit, nil
}
