package session

import (
	"context"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/agent/recipe"
)

// sessionSkills is the session's agent.Skills: the skills it was given
// (Config.Skills, read before the run) and its sub-agent construction for
// the runAs: subagent ones.
type sessionSkills struct {
	s   *Session
	set *recipe.Skills
}

var _ agent.Skills = (*sessionSkills)(nil)

func (k *sessionSkills) Skill(name string) (agent.SkillText, error) {
	sk, ok := k.set.Lookup(name)
	if !ok {
		msg := fmt.Sprintf("no skill %q", name)
		if near := recipe.Nearest(name, k.set.Names()); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		return agent.SkillText{}, fmt.Errorf("%s (the Skills list of your instructions names them all)", msg)
	}
	return agent.SkillText{Name: sk.Name, Description: sk.Description(), Subagent: sk.Subagent(), Body: sk.Body, Render: sk.Render}, nil
}

// RunSubagent runs the profile name on task as `reasonix subagent run`
// does: a child built like a fleet's, with the sub-agent gate (nobody to
// ask), whose events stay its own. Only its answer comes back.
func (k *sessionSkills) RunSubagent(ctx context.Context, name, task string) (string, error) {
	cfg, err := k.s.Subagent(name, false)
	if err != nil {
		return "", err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return "", err
	}
	res := a.Run(ctx, task)
	switch {
	case res.Outcome == agent.OutcomeSucceeded:
		return res.FinalAnswer, nil
	case res.FinalAnswer != "":
		return fmt.Sprintf("(the sub-agent ended %s)\n\n%s", res.Outcome, res.FinalAnswer), nil
	case res.Err != nil:
		return "", fmt.Errorf("the sub-agent ended %s: %w", res.Outcome, res.Err)
	}
	return "", fmt.Errorf("the sub-agent ended %s without an answer", res.Outcome)
}
