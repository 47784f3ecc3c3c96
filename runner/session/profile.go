package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"reasonix/agent"
	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/goals"
)

// childProfile resolves a sub-agent's profile: the default worker when the
// spec names none. An unknown name is an error the fleet reports for that
// item; profile names are never listed to the model (seed §3.10).
func (s *Session) childProfile(name string) (recipe.Profile, error) {
	if name == "" {
		return recipe.Profile{SystemPrompt: goals.ChildSystemPrompt}, nil
	}
	p, ok := s.cfg.Profiles.Lookup(name)
	if !ok {
		return recipe.Profile{}, fmt.Errorf("session: no sub-agent profile %q (add .reasonix/skills/%s/SKILL.md with runAs: subagent)", name, name)
	}
	return p, nil
}

// readOnlyProfile is goals.HostConfig.ReadOnlyProfile: a read-only
// profile's children claim nothing and count as no writer.
func (s *Session) readOnlyProfile(name string) bool {
	p, ok := s.cfg.Profiles.Lookup(name)
	return ok && p.ReadOnly
}

// narrowTools applies a profile's ceiling to a child's tools: only those
// allowed-tools names, and no writer at all under read-only. It can only
// remove tools.
func narrowTools(tools *agent.ToolRegistry, p recipe.Profile) (*agent.ToolRegistry, error) {
	if p.AllowedTools == nil && !p.ReadOnly {
		return tools, nil
	}
	out := agent.NewToolRegistry()
	for _, name := range tools.Names() {
		t, _ := tools.Get(name)
		if !p.Allows(name) || (p.ReadOnly && !agent.IsReadOnly(t)) {
			continue
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readOnlyGate refuses every writer before gate is asked: the profile's
// ceiling holds even for a tool that reached the child some other way,
// and whatever the fleet item claimed.
func readOnlyGate(gate agent.Gate, profile string) agent.Gate {
	return agent.GateFunc(func(ctx context.Context, c agent.Call) (agent.Verdict, error) {
		if !c.ReadOnly {
			return agent.Verdict{Code: agent.RefusedByRule, Reason: "the sub-agent profile " + profile + " is read-only: " + c.Tool + " is not available to it"}, nil
		}
		return gate.Authorize(ctx, c)
	})
}

// childModel applies the seed's precedence: [agent] subagent_models for
// the profile, the call's model, the profile's, [agent] subagent_model,
// then the parent's. A model other than the parent's is resolved like
// --model. The effort ranks the same way (config.SubagentEffort), ending
// at the chosen model's provider effort.
func (s *Session) childModel(spec goals.ChildSpec, p recipe.Profile) (Model, error) {
	m, err := s.childModelOnly(spec, p)
	if err != nil {
		return Model{}, err
	}
	m.Effort = config.SubagentEffort(&s.cfg.Settings.Agent, spec.Profile, spec.Effort, p.Effort, m.Effort)
	if m.Effort != "" && !slices.Contains(config.Efforts, m.Effort) {
		// Only a profile's front matter can get here unchecked.
		return Model{}, fmt.Errorf("session: sub-agent effort %q is not one of %s", m.Effort, strings.Join(config.Efforts, ", "))
	}
	return m, nil
}

func (s *Session) childModelOnly(spec goals.ChildSpec, p recipe.Profile) (Model, error) {
	a := s.cfg.Settings.Agent
	ref := recipe.ChildModel(a.SubagentModels[spec.Profile], spec.Model, p.Model, a.SubagentModel, "")
	if ref == "" || strings.EqualFold(ref, s.Agent.Model) {
		return Model{Provider: s.Agent.Provider, Name: s.Agent.Model, MaxTokens: s.Agent.MaxTokens,
			ContextWindow: s.Agent.ContextWindow, Effort: s.Agent.Effort, Vision: s.cfg.Model.Vision}, nil
	}
	resolve := s.cfg.Models
	if resolve == nil {
		resolve = func(ref string) (Model, error) { return ResolveModel(s.cfg.Settings, ref) }
	}
	// The child runs (and is priced) on the model chosen here.
	m, err := resolve(ref)
	if err != nil {
		return Model{}, fmt.Errorf("session: sub-agent model %q: %w", ref, err)
	}
	return m, nil
}

// Subagent builds one sub-agent running profile outside a goal, through
// the same construction as a fleet's children (`reasonix subagent`).
// readOnly narrows it further to the read-only tools and gate, whatever
// the profile says; otherwise it is a writer claiming the whole workspace
// under the session's posture, with nobody to ask.
func (s *Session) Subagent(profile string, readOnly bool) (agent.Config, error) {
	gate, err := s.newChildGate()
	if err != nil {
		return agent.Config{}, err
	}
	spec := goals.ChildSpec{ID: "subagent", Ref: "cli", Profile: profile, Writer: !readOnly && !s.readOnlyProfile(profile)}
	cfg, err := s.child(spec, GoalConfig{}, gate, false)
	if err != nil {
		return agent.Config{}, err
	}
	if readOnly {
		if cfg.Tools, err = narrowTools(cfg.Tools, recipe.Profile{ReadOnly: true}); err != nil {
			return agent.Config{}, err
		}
		cfg.Gate = readOnlyGate(cfg.Gate, profile)
	}
	return cfg, nil
}

// MCPPrompt renders the MCP prompt a command name (mcp__<server>__<prompt>)
// names, from the session's plugins; found is false when none offers it.
func (s *Session) MCPPrompt(ctx context.Context, name string, args []string) (text string, found bool, err error) {
	if s.plugins == nil {
		return "", false, nil
	}
	return s.plugins.GetPrompt(ctx, name, args)
}

// MCPPromptNames is the command names of the prompts the session's plugins
// offer, sorted; for suggesting the nearest one to an unknown name.
func (s *Session) MCPPromptNames(ctx context.Context) []string {
	if s.plugins == nil {
		return nil
	}
	var out []string
	for _, p := range s.plugins.Prompts(ctx) {
		out = append(out, p.Command())
	}
	return out
}
