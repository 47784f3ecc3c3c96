package session

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"reasonix/config"
	"reasonix/mcp"
)

// MCPConfig is the MCP manager's configuration for plugins run in workdir
// ("" when only validating it: mcp.Config.Validate is the rule a run's
// plugins must pass, and the commands that check a configuration run it).
func MCPConfig(set *config.Config, plugins []config.Plugin, workdir string) mcp.Config {
	servers := make([]mcp.ServerConfig, 0, len(plugins))
	for _, p := range plugins {
		timeouts := map[string]time.Duration{}
		for tool := range p.ToolTimeoutSeconds {
			timeouts[tool] = p.CallTimeout(set.Tools, tool)
		}
		servers = append(servers, mcp.ServerConfig{
			Name: p.Name, Type: p.Type, Command: p.Command, Args: p.Args, Env: p.Env,
			URL: p.URL, Headers: p.Headers,
			StartupTimeout: p.StartupTimeout(set.Tools),
			CallTimeout:    p.CallTimeout(set.Tools, ""),
			ToolTimeouts:   timeouts,
			Concurrency:    p.Concurrency,
		})
	}
	return mcp.Config{
		Servers:        servers,
		StartupTimeout: set.Tools.MCPStartupTimeout(),
		CallTimeout:    set.Tools.MCPCallTimeout(),
		WorkspaceRoot:  workdir,
	}
}

// StartPlugins starts MCP servers for one run in workdir and waits, at most
// the longest startup cap, for them to list their tools. A server that is
// not ready in time is logged and left out rather than failing the run.
// The caller stops the returned manager.
func StartPlugins(ctx context.Context, set *config.Config, plugins []config.Plugin, workdir string, log *slog.Logger) (*mcp.Manager, error) {
	cfg := MCPConfig(set, plugins, workdir)
	cfg.Logger = log.With(slog.String("component", "mcp"))
	wait := cfg.StartupTimeout
	for _, s := range cfg.Servers {
		wait = max(wait, s.StartupTimeout)
	}
	m, err := mcp.New(cfg)
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
			log.Warn("plugin not ready", "server", st.Server, "state", st.State, "err", st.Err)
		}
	}
	return m, nil
}
