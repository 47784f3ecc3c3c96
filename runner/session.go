package runner

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/mcp"
	"reasonix/policy"
	"reasonix/runner/store"
)

// defaultSystemPrompt is stable across runs so providers can cache the prefix.
const defaultSystemPrompt = `You are Reasonix, a coding agent working unattended in a software repository.
Work in the workspace directory with the tools you are given: read before you change, make small
correct changes, and verify them (build, run the tests) when you can. Nobody watches you work:
when a tool call is refused, do not retry it in another form to get around the refusal; finish
what you can and say plainly what you could not do and why. End with a short report of what you
changed and how you verified it.`

// runSession assembles the task's agent in ws and runs or continues it: a
// goal task (Goal or PlanFirst) through the goal controller, any other task
// as one agent run. An error means the session could not be assembled; how
// the run itself ended is in the outcome.
func (s *Service) runSession(ctx context.Context, r *run, ws *Workdir) (outcome, error) {
	task := r.task
	provider, model, err := s.cfg.Providers("")
	if err != nil {
		return outcome{}, fmt.Errorf("provider: %w", err)
	}
	confine, err := policy.NewConfinement(policy.SandboxConfig{
		WorkspaceRoot: ws.Dir,
		AllowWrite:    s.set.Sandbox.AllowWrite,
		ForbidRead:    s.set.Sandbox.ForbidRead,
		Bash:          cmp.Or(s.set.Sandbox.Bash, config.BashOff),
		Network:       s.set.Sandbox.Network,
	})
	if err != nil {
		return outcome{}, fmt.Errorf("sandbox: %w", err)
	}
	obs := r.observer(ctx)
	env := agent.ToolEnv{
		Workdir:            ws.Dir,
		BashTimeoutSeconds: s.set.Tools.BashTimeoutSeconds,
		Paths:              confine,
		Shell:              confine.Shell(),
		ShellEnv:           s.shellEnv(),
		Emit:               obs,
	}
	inner := agent.NewToolRegistry()
	if err := inner.AddBuiltins(env, s.set.Tools.Enabled); err != nil {
		return outcome{}, fmt.Errorf("tools: %w", err)
	}
	if plugins := s.taskPlugins(task, ws.Dir); len(plugins) > 0 {
		m, err := s.startPlugins(ctx, ws.Dir, plugins)
		if err != nil {
			return outcome{}, err
		}
		defer func() {
			// Stop even when ctx is done: the servers are child processes.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = m.Stop(sctx)
		}()
		if _, err := m.AddTools(inner, func(_ context.Context, ev agent.Event) { obs(ev) }); err != nil {
			s.log.Warn("runner: plugin tools", "task", task.ID, "err", err)
		}
	}
	tools, err := r.journaled(inner)
	if err != nil {
		return outcome{}, err
	}
	grants, err := s.st.Grants(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	gate, err := policy.NewGate(policy.GateConfig{
		Policy:   s.pol,
		Posture:  policy.Posture(task.Posture),
		Approver: &broker{s: s, task: task},
		Workdir:  ws.Dir,
		Grants:   grants,
	})
	if err != nil {
		return outcome{}, fmt.Errorf("gate: %w", err)
	}

	history, err := s.st.Messages(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	history, err = r.recoverJournal(ctx, history, tools)
	if err != nil {
		return outcome{}, err
	}
	inbox, err := s.st.TakeInbox(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	ref, _ := s.set.ResolveModel("")
	base := agent.Config{
		Provider:     provider,
		Model:        model,
		Tools:        tools,
		Gate:         gate,
		SystemPrompt: cmp.Or(s.cfg.SystemPrompt, s.set.Agent.SystemPrompt, defaultSystemPrompt),
		Temperature:  s.set.Agent.Temperature,
		MaxTokens:    ref.MaxOutputTokens,
		MaxSteps:     s.set.Agent.MaxSteps,
		Observer:     obs,
	}
	if task.Goal || task.PlanFirst {
		return s.runGoal(ctx, r, goalSession{base: base, env: env, confine: confine, grants: grants,
			workdir: ws.Dir, history: history, inbox: inbox})
	}
	base.History = history
	ag, err := agent.New(base)
	if err != nil {
		return outcome{}, err
	}
	r.mu.Lock()
	r.ag = ag
	r.mu.Unlock()
	var res agent.Result
	switch {
	case len(history) == 0:
		for _, m := range inbox {
			ag.Steer(m.Text)
		}
		res = ag.Run(ctx, task.Prompt)
	case len(inbox) > 0 && finalAnswer(history):
		for _, m := range inbox[1:] {
			ag.Steer(m.Text)
		}
		res = ag.Run(ctx, inbox[0].Text)
	default:
		for _, m := range inbox {
			ag.Steer(m.Text)
		}
		res = ag.Continue(ctx)
	}
	return s.classify(ctx, r, res), nil
}

// finalAnswer reports whether the conversation ends with an answer that
// has no calls pending, so continuing it needs a new user message.
func finalAnswer(history []agent.Message) bool {
	last := history[len(history)-1]
	return last.Role == agent.RoleAssistant && len(last.ToolCalls) == 0
}

// taskPlugins lists the MCP servers of a task: the service's [[plugins]],
// plus those the repository declares in its own .mcp.json when both
// [serve] allow_workspace_plugins and the workspace's plugins_from_workspace
// allow it. A service entry wins a name collision; a broken .mcp.json is
// logged and ignored rather than failing the task.
func (s *Service) taskPlugins(task store.Task, dir string) []config.Plugin {
	plugins := s.set.Plugins
	if !s.set.Serve.AllowWorkspacePlugins || task.Workspace == "" {
		return plugins
	}
	allowed := false
	for _, w := range s.set.Workspaces {
		allowed = allowed || w.Name == task.Workspace && w.PluginsFromWorkspace
	}
	if !allowed {
		return plugins
	}
	own, err := config.WorkspacePlugins(dir, nil)
	if err != nil {
		s.log.Warn("runner: the workspace's .mcp.json is ignored", "task", task.ID, "err", err)
		return plugins
	}
	merged := slices.Clone(plugins)
	for _, p := range own {
		if !slices.ContainsFunc(plugins, func(q config.Plugin) bool { return q.Name == p.Name }) {
			merged = append(merged, p)
		}
	}
	return merged
}

// startPlugins starts the task's MCP servers and waits, at
// most the startup cap, for them. A server that is not ready is left out.
func (s *Service) startPlugins(ctx context.Context, workdir string, plugins []config.Plugin) (*mcp.Manager, error) {
	servers := make([]mcp.ServerConfig, 0, len(plugins))
	wait := s.set.Tools.MCPStartupTimeout()
	for _, p := range plugins {
		timeouts := map[string]time.Duration{}
		for tool := range p.ToolTimeoutSeconds {
			timeouts[tool] = p.CallTimeout(s.set.Tools, tool)
		}
		servers = append(servers, mcp.ServerConfig{
			Name: p.Name, Type: p.Type, Command: p.Command, Args: p.Args, Env: p.Env,
			URL: p.URL, Headers: p.Headers,
			StartupTimeout: p.StartupTimeout(s.set.Tools),
			CallTimeout:    p.CallTimeout(s.set.Tools, ""),
			ToolTimeouts:   timeouts,
			Concurrency:    p.Concurrency,
		})
		wait = max(wait, p.StartupTimeout(s.set.Tools))
	}
	m, err := mcp.New(mcp.Config{
		Servers:        servers,
		StartupTimeout: s.set.Tools.MCPStartupTimeout(),
		CallTimeout:    s.set.Tools.MCPCallTimeout(),
		WorkspaceRoot:  workdir,
		Logger:         s.log.With(slog.String("component", "mcp")),
	})
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	if err := m.Start(ctx); err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_ = m.WaitReady(wctx) // per-server failures are in Status
	for _, st := range m.Status() {
		if st.State != mcp.StateReady {
			s.log.Warn("runner: plugin not ready", "server", st.Server, "state", st.State, "err", st.Err)
		}
	}
	return m, nil
}

// shellEnv is the environment of shell commands: Config.ShellEnv, or the
// process environment without the secrets the configuration names.
func (s *Service) shellEnv() []string {
	if s.cfg.ShellEnv != nil {
		return s.cfg.ShellEnv
	}
	secret := map[string]bool{"REASONIX_API_TOKEN": true}
	for _, p := range s.set.Providers {
		if p.APIKeyEnv != "" {
			secret[p.APIKeyEnv] = true
		}
	}
	for _, name := range []string{s.set.Store.DSNEnv, s.set.Serve.APITokenEnv} {
		if name != "" {
			secret[name] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !secret[name] {
			env = append(env, kv)
		}
	}
	return env
}
