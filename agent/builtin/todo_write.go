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
		"pending, in_progress or completed. Use it for work with several steps; mark items completed as soon as they are done. " +
		"For larger work, make items phases with sub-steps (steps, one level deep): at most one phase, and one step within it, in progress at a time; " +
		"a phase is completed only when all its steps are."
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
          "content": {"type": "string", "description": "What the step (or phase) does, in a short imperative sentence."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
          "steps": {
            "type": "array",
            "description": "Optional sub-steps of this phase, in order.",
            "items": {
              "type": "object",
              "properties": {
                "content": {"type": "string", "description": "What the sub-step does."},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
              },
              "required": ["content", "status"],
              "additionalProperties": false
            }
          }
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

// todoPhase is what an item of the plan may say; todoStep a sub-step,
// which may not have steps of its own.
type todoPhase struct {
	Content string            `json:"content"`
	Status  string            `json:"status"`
	Steps   []json.RawMessage `json:"steps"`
}

type todoStep struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func (t *todoWrite) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a todoWriteArgs
	if err := decodeArgs("todo_write", raw, &a, "todos"); err != nil {
		return "", err
	}
	plan := make([]agent.TodoItem, len(a.Todos))
	items, active := len(a.Todos), 0
	for i, rawItem := range a.Todos {
		where := fmt.Sprintf("todo_write: todos[%d]", i)
		var ph todoPhase
		if err := decodeArgs(where, rawItem, &ph, "content", "status"); err != nil {
			return "", err
		}
		item, err := checkTodo(where, ph.Content, ph.Status)
		if err != nil {
			return "", err
		}
		if item.Status == todoInProgress {
			active++
		}
		if items += len(ph.Steps); items > todoMaxItems {
			return "", fmt.Errorf("todo_write: the plan has more than %d items and steps; keep it to %d or fewer", todoMaxItems, todoMaxItems)
		}
		stepsActive, open := 0, 0
		for j, rawStep := range ph.Steps {
			w := fmt.Sprintf("%s.steps[%d]", where, j)
			var st todoStep
			if err := decodeArgs(w, rawStep, &st, "content", "status"); err != nil {
				return "", err
			}
			step, err := checkTodo(w, st.Content, st.Status)
			if err != nil {
				return "", err
			}
			switch step.Status {
			case todoInProgress:
				stepsActive++
				open++
			case todoPending:
				open++
			}
			item.Steps = append(item.Steps, step)
		}
		if stepsActive > 1 {
			return "", fmt.Errorf("%s: %d steps are in_progress; at most one step of a phase may be in progress at a time", where, stepsActive)
		}
		if stepsActive > 0 && item.Status != todoInProgress {
			return "", fmt.Errorf("%s: a step is in_progress, so the phase must be in_progress too", where)
		}
		if item.Status == todoCompleted && open > 0 {
			return "", fmt.Errorf("%s: the phase is completed but %d of its steps are not; complete them or mark the phase in_progress", where, open)
		}
		plan[i] = item
	}
	if active > 1 {
		return "", fmt.Errorf("todo_write: %d items are in_progress; at most one may be in progress at a time", active)
	}
	if t.env.Emit != nil {
		t.env.Emit(agent.Event{Type: agent.EventPlanUpdated, Plan: plan})
	}
	return renderPlan(plan), nil
}

// checkTodo checks one item's text and status.
func checkTodo(where, content, status string) (agent.TodoItem, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return agent.TodoItem{}, fmt.Errorf("%s: content must not be empty", where)
	}
	if len(content) > todoMaxContent {
		return agent.TodoItem{}, fmt.Errorf("%s: content is %d bytes; keep each item under %d", where, len(content), todoMaxContent)
	}
	switch status {
	case todoPending, todoCompleted, todoInProgress:
	default:
		return agent.TodoItem{}, fmt.Errorf("%s: status must be pending, in_progress or completed, got %q", where, status)
	}
	return agent.TodoItem{Content: content, Status: status}, nil
}

// renderPlan is the short confirmation the model gets back.
func renderPlan(plan []agent.TodoItem) string {
	if len(plan) == 0 {
		return "plan cleared"
	}
	done := 0
	var b strings.Builder
	for _, it := range plan {
		if it.Status == todoCompleted {
			done++
		}
		fmt.Fprintf(&b, "\n%s %s", todoMark(it.Status), it.Content)
		for _, st := range it.Steps {
			fmt.Fprintf(&b, "\n    %s %s", todoMark(st.Status), st.Content)
		}
	}
	return fmt.Sprintf("plan updated: %d of %d done%s", done, len(plan), b.String())
}

func todoMark(status string) string {
	switch status {
	case todoCompleted:
		return "[x]"
	case todoInProgress:
		return "[>]"
	}
	return "[ ]"
}
