package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("forget", func(env agent.ToolEnv) agent.Tool {
		if env.Memory == nil {
			return nil
		}
		return &forget{mem: env.Memory}
	})
}

// forget removes a remembered fact from what later tasks recall (the store
// keeps it as a record). A writer, like remember.
type forget struct{ mem agent.Memory }

func (*forget) Name() string { return "forget" }
func (*forget) Description() string {
	return "Stop recalling a remembered fact that is wrong or out of date, by the id the memory tool shows (mem_…). " +
		"Use remember afterwards to save the corrected fact."
}

func (*forget) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "The memory's id, as the memory tool lists it."}
  },
  "required": ["id"],
  "additionalProperties": false
}`)
}

func (t *forget) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		ID string `json:"id"`
	}
	if err := decodeArgs("forget", raw, &a, "id"); err != nil {
		return "", err
	}
	if a.ID = strings.TrimSpace(a.ID); a.ID == "" {
		return "", fmt.Errorf("forget: id is empty; list memories with the memory tool to find it")
	}
	e, err := t.mem.Forget(ctx, a.ID)
	if err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	return fmt.Sprintf("Forgot %s: %q.", e.ID, e.Text), nil
}
