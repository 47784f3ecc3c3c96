package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"reasonix/agent"
	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/goals"
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

// RunSubagent runs the profile name on task. With a host (a goal's, or
// SkillHost's) it is that host's child exactly as the task tool's: its
// spend, tokens, events and delegation counters are the run's. Without
// one it runs as `reasonix subagent run` does: a child built like a
// fleet's, with the sub-agent gate (nobody to ask), whose events stay its
// own. Only its answer comes back.
func (k *sessionSkills) RunSubagent(ctx context.Context, name, task string) (string, error) {
	if k.s.noDelegation.Load() {
		return "", errNoDelegation
	}
	if h := k.s.skillHost.Load(); h != nil {
		rec, err := h.RunTask(ctx, "skill:"+name, task, name)
		if err != nil {
			return "", err
		}
		switch {
		case rec.State == goals.NodeDone:
			return rec.Answer, nil
		case rec.Answer != "":
			return fmt.Sprintf("(the sub-agent ended %s)\n\n%s", rec.State, rec.Answer), nil
		case rec.Reason != "":
			return "", fmt.Errorf("the sub-agent ended %s: %s", rec.State, rec.Reason)
		}
		return "", fmt.Errorf("the sub-agent ended %s without an answer", rec.State)
	}
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

// errNoDelegation is run_skill's answer, for a sub-agent skill, in the
// control arm of --ablate subagent.
var errNoDelegation = errors.New("this run measures work without delegation (--ablate subagent): sub-agent skills are off; do the work yourself")

// diskSkills remembers the skill roots on this machine's disk: every task
// start reads them again, and mostly only stats them (recipe.DirCache).
var diskSkills = new(recipe.DirCache)

// DiskSkillLayers reads the skill roots on this machine's disk: the
// Reasonix home's skills/, then each [skills] paths root, less the
// excluded ones (sk may be nil). A link is followed only to a file inside
// the home, or inside its own paths root. An unreadable root is a Warning.
// A file whose path, size and modification time are unchanged since the
// last call is not read again.
func DiskSkillLayers(home string, sk *config.Skills) ([]recipe.Layer, []recipe.Warning) {
	if sk == nil {
		sk = &config.Skills{}
	}
	var layers []recipe.Layer
	var warns []recipe.Warning
	read := func(scope recipe.Scope, root, boundary string) {
		files, err := diskSkills.ReadDir(root, boundary)
		if err != nil {
			warns = append(warns, recipe.Warning{Scope: scope, Path: root, Problem: err.Error()})
		}
		layers = append(layers, recipe.Layer{Scope: scope, Files: files})
	}
	if home != "" {
		if root := filepath.Join(home, recipe.UserSkillsDir); !sk.Excluded(root) {
			read(recipe.ScopeUser, root, home)
		}
	}
	for _, root := range sk.Roots() {
		read(recipe.ScopePath, root, root)
	}
	return layers, warns
}

// CheckoutSkills loads the skills `reasonix run` sees in a person's own
// checkout: DiskSkillLayers, then workdir's .reasonix/skills as it is on
// disk (theirs, like its instruction files). Skipped files are the set's
// Warnings.
func CheckoutSkills(home string, sk *config.Skills, workdir string) *recipe.Skills {
	if sk == nil {
		sk = &config.Skills{}
	}
	layers, warns := DiskSkillLayers(home, sk)
	if workdir != "" && !sk.Excluded(config.ProjectSkillsDir) {
		files, err := recipe.ReadDir(filepath.Join(workdir, recipe.ProjectSkillsDir), workdir)
		if err != nil {
			warns = append(warns, recipe.Warning{Scope: recipe.ScopeProject, Path: recipe.ProjectSkillsDir, Problem: err.Error()})
		}
		layers = append(layers, recipe.Layer{Scope: recipe.ScopeProject, Files: files})
	}
	skills := recipe.LoadSkills(recipe.SkillOptions{Disabled: sk.DisabledSkills}, layers...)
	skills.Warnings = append(warns, skills.Warnings...)
	return skills
}

// Skills is the session's skill set (Config.Skills); nil when it has none.
func (s *Session) Skills() *recipe.Skills { return s.cfg.Skills }
