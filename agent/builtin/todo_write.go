package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

// The statuses a plan item may have.
const (
	todoPending    = "pending"
	todoInProgress = "in_progress"
	todoCompleted  = "completed"
)

// The plan is bounded: a chat message shows it, and a plan of hundreds of
// items or of essays is a sign the model is looping, not planning.
const (
	todoMaxItems   = 100
	todoMaxContent = 500
)

func init() {
	agent.RegisterBuiltin("todo_write", func(env agent.ToolEnv) agent.Tool { return &todoWrite{env: env} })
}

// todoWrite replaces the model-maintained plan and announces it.
type todoWrite struct{ env agent.ToolEnv }

// todo_write changes nothing outside the process (the plan is an event), so
// the tool contract marks it read-only.
var _ agent.ReadOnlyTool = (*todoWrite)(nil)

func (*todoWrite) Name() string   { return "todo_write" }
func (*todoWrite) ReadOnly() bool { return true }
func (*todoWrite) Description() string {
	return "Replace the task plan shown to the people following this run. Send the whole list every time, each item with a status: " +
		"pending, in_progress (at most one item at a time) or completed. Use it for work with several steps; " +
		"mark items completed as soon as they are done."
}

func (*todoWrite) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The complete plan, in order.",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "description": "What the step does, in a short imperative sentence."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["todos"],
  "additionalProperties": false
}`)
}

type todoWriteArgs struct {
	Todos []json.RawMessage `json:"todos"`
}

func (t *todoWrite) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a todoWriteArgs
	if err := decodeArgs("todo_write", raw, &a, "todos"); err != nil {
		return "", err
	}
	if len(a.Todos) > todoMaxItems {
		return "", fmt.Errorf("todo_write: the plan has %d items; keep it to %d or fewer", len(a.Todos), todoMaxItems)
	}
	plan := make([]agent.TodoItem, len(a.Todos))
	active := 0
	for i, rawItem := range a.Todos {
		item := &plan[i]
		if err := decodeArgs(fmt.Sprintf("todo_write: todos[%d]", i), rawItem, item, "content", "status"); err != nil {
			return "", err
		}
		item.Content = strings.TrimSpace(item.Content)
		if item.Content == "" {
			return "", fmt.Errorf("todo_write: todos[%d]: content must not be empty", i)
		}
		if len(item.Content) > todoMaxContent {
			return "", fmt.Errorf("todo_write: todos[%d]: content is %d bytes; keep each item under %d", i, len(item.Content), todoMaxContent)
		}
		switch item.Status {
		case todoPending, todoCompleted:
		case todoInProgress:
			active++
		default:
			return "", fmt.Errorf("todo_write: todos[%d]: status must be pending, in_progress or completed, got %q", i, item.Status)
		}
	}
	if active > 1 {
		return "", fmt.Errorf("todo_write: %d items are in_progress; at most one may be in progress at a time", active)
	}
	if t.env.Emit != nil {
		t.env.Emit(agent.Event{Type: agent.EventPlanUpdated, Plan: plan})
	}
	return renderPlan(plan), nil
}

// renderPlan is the short confirmation the model gets back.
func renderPlan(plan []agent.TodoItem) string {
	if len(plan) == 0 {
		return "plan cleared"
	}
	done := 0
	var b strings.Builder
	for _, it := range plan {
		mark := "[ ]"
		switch it.Status {
		case todoCompleted:
			mark = "[x]"
			done++
		case todoInProgress:
			mark = "[>]"
		}
		fmt.Fprintf(&b, "\n%s %s", mark, it.Content)
	}
	return fmt.Sprintf("plan updated: %d of %d done%s", done, len(plan), b.String())
}
