package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"reasonix/runner/session"
)

// mcpList is `reasonix mcp list`: start every configured server, wait
// for it, and show its state and tool count.
func mcpList(file string, stdout, _ io.Writer) error {
	cfg, err := loadConfig(file, false)
	if err != nil {
		return err
	}
	workdir, err := workspaceDir("")
	if err != nil {
		return err
	}
	if len(cfg.Plugins) == 0 {
		fmt.Fprintln(stdout, "no MCP servers are configured ([[plugins]] or .mcp.json)")
		return nil
	}
	ctx := context.Background()
	m, err := session.StartPlugins(ctx, cfg, cfg.Plugins, workdir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return &configError{fmt.Errorf("[[plugins]]: %w", err)}
	}
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
