package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"reasonix/agent/recipe"
	"reasonix/mcp"
	"reasonix/runner/session"
)

// MCP prompts are commands named /mcp__<server>__<prompt> (seed §3.8).
//
// The service renders them at intake, like file commands, rather than at
// task start in the worker: only at intake can an unknown name be refused
// with the nearest names before anything is acknowledged or queued, and the
// stored prompt is then exactly what runs (a retry or another node renders
// nothing again). Rendering needs the [[plugins]] running, so the service
// starts them once, on the first request that needs a prompt, and keeps
// that one manager until Stop: a second set of processes per plugin, but
// only once and only when someone names a prompt, instead of one start per
// intake. The manager lends nothing but text: its tools are never added to
// any session, and a prompt's text is only the task's prompt, so it cannot
// change a task's posture, approvers or grants. Plugins a workspace
// declares in its own .mcp.json are not started here; their prompts are
// not commands of the service.
type promptPlugins struct {
	once sync.Once
	m    *mcp.Manager
	err  error
}

// mcpPrompts returns the running prompt manager, starting it on first use;
// nil when no [[plugins]] are configured.
func (s *Service) mcpPrompts(ctx context.Context) (*mcp.Manager, error) {
	if len(s.set.Plugins) == 0 {
		return nil, nil
	}
	p := &s.prompts
	p.once.Do(func() {
		// Started with no workspace: the servers get no roots and run in
		// the service's own directory, since a prompt is about no checkout.
		p.m, p.err = session.StartPlugins(context.WithoutCancel(ctx), s.set, s.set.Plugins, "", s.log)
	})
	if p.err != nil {
		return nil, fmt.Errorf("runner: MCP prompts: %w", p.err)
	}
	return p.m, nil
}

// stopPrompts stops the prompt manager if it was ever started.
func (s *Service) stopPrompts(ctx context.Context) {
	p := &s.prompts
	p.once.Do(func() {}) // nothing can start it from now on
	if p.m != nil {
		if err := p.m.Stop(ctx); err != nil {
			s.log.Warn("runner: stopping MCP prompt servers", "err", err)
		}
	}
}

// Commands is the commands of a workspace (see Recipes) plus, when
// withMCP, the prompts of the configured [[plugins]] as commands of scope
// mcp (a file command of the same name wins). Render them with
// RenderCommand, never Command.Render: an MCP command has no body.
func (s *Service) Commands(ctx context.Context, workspaceName string, withMCP bool) (*recipe.Commands, error) {
	cs, _, err := s.Recipes(ctx, workspaceName)
	if err != nil || !withMCP {
		return cs, err
	}
	s.addMCPPrompts(ctx, cs)
	return cs, nil
}

// addMCPPrompts adds the plugins' prompts to cs; plugins that cannot start
// are logged and leave their prompts out, like a malformed command file.
func (s *Service) addMCPPrompts(ctx context.Context, cs *recipe.Commands) {
	m, err := s.mcpPrompts(ctx)
	if err != nil {
		s.log.Warn("runner: MCP prompts are not listed", "err", err)
		return
	}
	AddMCPPrompts(ctx, cs, m)
}

// AddMCPPrompts adds the prompts m's ready servers offer to cs as commands
// of scope mcp, with their descriptions and an argument hint built from
// their declared arguments. A nil m adds nothing.
func AddMCPPrompts(ctx context.Context, cs *recipe.Commands, m *mcp.Manager) {
	if m == nil {
		return
	}
	for _, p := range m.Prompts(ctx) {
		cs.Add(recipe.NewCommand(p.Command(), p.Description, p.ArgumentHint, recipe.ScopeMCP, ""))
	}
}

// RenderCommand is c's prompt for args: a file command's rendered body, or
// the text an MCP command's server returns.
func (s *Service) RenderCommand(ctx context.Context, c *recipe.Command, args []string) (string, error) {
	if c.Scope != recipe.ScopeMCP {
		return c.Render(args), nil
	}
	m, err := s.mcpPrompts(ctx)
	if err != nil {
		return "", err
	}
	if m == nil {
		return "", fmt.Errorf("runner: no plugin offers /%s", c.Name)
	}
	text, found, err := m.GetPrompt(ctx, c.Name, args)
	switch {
	case err != nil:
		return "", err
	case !found:
		return "", fmt.Errorf("runner: no plugin offers /%s any more", c.Name)
	case strings.TrimSpace(text) == "":
		return "", fmt.Errorf("runner: the prompt /%s is empty", c.Name)
	}
	return text, nil
}

// isMCPName reports whether name has the form of an MCP prompt command.
func isMCPName(name string) bool { return strings.HasPrefix(name, "mcp__") }
