package config

import "strings"

// Efforts are the reasoning-effort levels a configuration may name, least
// to most. Each provider maps them to its wire (agent.Effort): OpenAI's
// reasoning_effort, the Responses API's reasoning.effort, Anthropic's
// thinking budget. "" means the model's own default.
var Efforts = []string{"minimal", "low", "medium", "high", "max"}

func checkEffort(p *problems, source, field, v string) {
	if v == "" {
		return
	}
	checkOneOf(p, source, field, v, Efforts...)
}

// SubagentEffort picks a sub-agent's reasoning effort by the seed's
// precedence (§3.10): [agent] subagent_efforts for the profile, the call's
// own effort (a task or fleet item), the profile's front matter, [agent]
// subagent_effort, then parent (the effort of the child's model's
// provider). Blank values are skipped.
func SubagentEffort(a *Agent, profile, call, profileDefault, parent string) string {
	for _, e := range []string{a.SubagentEfforts[profile], call, profileDefault, a.SubagentEffort} {
		if e = strings.TrimSpace(e); e != "" {
			return e
		}
	}
	return parent
}
