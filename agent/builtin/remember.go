package builtin

import (
	"context"
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("remember", func(env agent.ToolEnv) agent.Tool {
		if env.Memory == nil {
			return nil
		}
		return &remember{mem: env.Memory}
	})
}

// remember saves a fact for later tasks. It is a writer: the policy asks
// about it like any other change (and a task a webhook started always
// asks), because what it saves reaches every later task of its scope.
type remember struct{ mem agent.Memory }

func (*remember) Name() string { return "remember" }
func (*remember) Description() string {
	return "Save one short, durable fact for later tasks: how this repository builds or tests, a convention the team asked for, " +
		"a pitfall you found. Check with the memory tool first that it is not already known. " +
		"scope \"workspace\" (the default) is for every task of this workspace; \"user\" only for tasks of the person who asked for this one. " +
		"Never save secrets, credentials or personal data; save facts, not the progress of this task."
}

func (*remember) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "text": {"type": "string", "description": "The fact, in one or two self-contained sentences (at most 1000 bytes)."},
    "scope": {"type": "string", "enum": ["workspace", "user"], "description": "Who the fact is for; workspace when omitted."}
  },
  "required": ["text"],
  "additionalProperties": false
}`)
}

func (t *remember) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Text  string `json:"text"`
		Scope string `json:"scope"`
	}
	if err := decodeArgs("remember", raw, &a, "text"); err != nil {
		return "", err
	}
	if a.Scope == "" {
		a.Scope = "workspace"
	}
	if a.Scope != "workspace" && a.Scope != "user" {
		return "", fmt.Errorf("remember: scope must be \"workspace\" or \"user\", got %q", a.Scope)
	}
	e, err := t.mem.Remember(ctx, a.Scope, a.Text)
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	return fmt.Sprintf("Remembered as %s (%s scope).", e.ID, e.Scope), nil
}
