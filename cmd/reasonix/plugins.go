package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"reasonix/config"
	"reasonix/mcp"
)

// newPlugins builds the MCP manager for the configured [[plugins]] (and the
// project's .mcp.json), expanding ${REASONIX_WORKSPACE_ROOT} to workdir.
// It returns nil when no plugin is configured.
func newPlugins(cfg *config.Config, workdir string, log *slog.Logger) (*mcp.Manager, error) {
	if len(cfg.Plugins) == 0 {
		return nil, nil
	}
	servers := make([]mcp.ServerConfig, 0, len(cfg.Plugins))
	for _, p := range cfg.Plugins {
		timeouts := map[string]time.Duration{}
		for tool := range p.ToolTimeoutSeconds {
			timeouts[tool] = p.CallTimeout(cfg.Tools, tool)
		}
		servers = append(servers, mcp.ServerConfig{
			Name:           p.Name,
			Type:           p.Type,
			Command:        p.Command,
			Args:           p.Args,
			Env:            p.Env,
			URL:            p.URL,
			Headers:        p.Headers,
			StartupTimeout: p.StartupTimeout(cfg.Tools),
			CallTimeout:    p.CallTimeout(cfg.Tools, ""),
			ToolTimeouts:   timeouts,
			Concurrency:    p.Concurrency,
		})
	}
	m, err := mcp.New(mcp.Config{
		Servers:        servers,
		StartupTimeout: cfg.Tools.MCPStartupTimeout(),
		CallTimeout:    cfg.Tools.MCPCallTimeout(),
		WorkspaceRoot:  workdir,
		Logger:         log,
	})
	if err != nil {
		return nil, &configError{fmt.Errorf("[[plugins]]: %w", err)}
	}
	return m, nil
}

// startPlugins starts every server and waits, at most the startup cap, for
// them to list their tools. A server that is not ready in time is reported
// and left out of the run rather than failing it.
func startPlugins(ctx context.Context, m *mcp.Manager, cfg *config.Config, stderr io.Writer) {
	if err := m.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "reasonix: plugins: %v\n", err)
		return
	}
	wait := cfg.Tools.MCPStartupTimeout()
	for _, p := range cfg.Plugins {
		wait = max(wait, p.StartupTimeout(cfg.Tools))
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_ = m.WaitReady(wctx) // per-server failures are in Status
	for _, s := range m.Status() {
		if s.State != mcp.StateReady {
			fmt.Fprintf(stderr, "reasonix: plugin %s is %s: %v\n", s.Server, s.State, s.Err)
		}
	}
}

// mcpCommand is `reasonix mcp list`: start every configured server, wait
// for it, and show its state and tool count.
func mcpCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "list" {
		return usageErrorf("usage: reasonix mcp list [--config FILE]")
	}
	file, err := configFlag("mcp list", args[1:], stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(file)
	if err != nil {
		return err
	}
	workdir, err := workspaceDir("")
	if err != nil {
		return err
	}
	m, err := newPlugins(cfg, workdir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	if m == nil {
		fmt.Fprintln(stdout, "no MCP servers are configured ([[plugins]] or .mcp.json)")
		return nil
	}
	ctx := context.Background()
	startPlugins(ctx, m, cfg, io.Discard)
	defer m.Stop(ctx)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTYPE\tSTATE\tTOOLS\tNOTE")
	for _, s := range m.Status() {
		note := ""
		if s.Err != nil {
			note = s.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Server, s.Type, s.State, s.Tools, note)
	}
	return tw.Flush()
}
