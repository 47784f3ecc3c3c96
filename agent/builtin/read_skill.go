package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("read_skill", func(env agent.ToolEnv) agent.Tool {
		if env.Skills == nil {
			return nil
		}
		return &readSkill{skills: env.Skills}
	})
}

// readSkill shows a skill of the prompt's index as written, so the model
// can decide whether it fits before following or running it.
type readSkill struct{ skills agent.Skills }

var _ agent.ReadOnlyTool = (*readSkill)(nil)

func (*readSkill) Name() string   { return "read_skill" }
func (*readSkill) ReadOnly() bool { return true }
func (*readSkill) Description() string {
	return "Read a skill from the Skills list of your instructions: its description and its full text as written. " +
		"Follow an inline skill's text yourself, or call run_skill to have it rendered with arguments (and a sub-agent skill run)."
}

func (*readSkill) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as the Skills list shows it."}
  },
  "required": ["name"],
  "additionalProperties": false
}`)
}

func (t *readSkill) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs("read_skill", raw, &a, "name"); err != nil {
		return "", err
	}
	sk, err := lookupSkill("read_skill", t.skills, a.Name)
	if err != nil {
		return "", err
	}
	kind := "inline: its text becomes your instructions"
	if sk.Subagent {
		kind = "sub-agent: run_skill runs it as a separate worker on a task"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (%s)", sk.Name, kind)
	if sk.Description != "" {
		b.WriteString("\nDescription: " + sk.Description)
	}
	b.WriteString("\n\n" + sk.Body)
	return b.String(), nil
}

// lookupSkill trims and finds name, or says what is wrong in the tool's
// words.
func lookupSkill(tool string, skills agent.Skills, name string) (agent.SkillText, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if name == "" {
		return agent.SkillText{}, fmt.Errorf("%s: name is empty; give a skill's name from the Skills list", tool)
	}
	sk, err := skills.Skill(name)
	if err != nil {
		return agent.SkillText{}, fmt.Errorf("%s: %w", tool, err)
	}
	return sk, nil
}
