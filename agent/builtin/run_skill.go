package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("run_skill", func(env agent.ToolEnv) agent.Tool {
		if env.Skills == nil {
			return nil
		}
		return &runSkill{skills: env.Skills}
	})
}

// runSkill uses a skill: an inline skill's text, rendered with the
// arguments, comes back as instructions for this session; a sub-agent
// skill runs as its profile and its answer comes back. It is a writer
// (a sub-agent may change the workspace), so the policy asks about it
// like any other change; the sub-agent's own calls pass its own gate.
type runSkill struct{ skills agent.Skills }

func (*runSkill) Name() string { return "run_skill" }
func (*runSkill) Description() string {
	return "Use a skill from the Skills list of your instructions. An inline skill returns its instructions with the arguments filled in: " +
		"follow them for the rest of this task. A sub-agent skill runs a separate worker with the arguments as its whole task " +
		"(it sees nothing of this conversation, so say everything it needs) and returns its answer."
}

func (*runSkill) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as the Skills list shows it."},
    "arguments": {"type": "string", "description": "The skill's arguments (space-separated words for an inline skill); for a sub-agent skill, its task. Optional for an inline skill."}
  },
  "required": ["name"],
  "additionalProperties": false
}`)
}

// maxSkillArguments bounds what one call passes on.
const maxSkillArguments = 16 << 10

func (t *runSkill) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if err := decodeArgs("run_skill", raw, &a, "name"); err != nil {
		return "", err
	}
	if len(a.Arguments) > maxSkillArguments {
		return "", fmt.Errorf("run_skill: arguments are %d bytes, at most %d are accepted", len(a.Arguments), maxSkillArguments)
	}
	sk, err := lookupSkill("run_skill", t.skills, a.Name)
	if err != nil {
		return "", err
	}
	if sk.Subagent {
		task := strings.TrimSpace(a.Arguments)
		if task == "" {
			return "", fmt.Errorf("run_skill: %s is a sub-agent skill: arguments must say its whole task", sk.Name)
		}
		answer, err := t.skills.RunSubagent(ctx, sk.Name, task)
		if err != nil {
			return "", fmt.Errorf("run_skill: %s: %w", sk.Name, err)
		}
		return fmt.Sprintf("The sub-agent skill %s answered:\n\n%s", sk.Name, answer), nil
	}
	text := sk.Body
	if sk.Render != nil {
		text = sk.Render(strings.Fields(a.Arguments))
	}
	return fmt.Sprintf("Skill %s: follow these instructions for the rest of this task.\n\n<skill name=%q>\n%s\n</skill>", sk.Name, sk.Name, text), nil
}
