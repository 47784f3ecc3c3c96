package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"reasonix/runner/session"
)

// mcpServer is one line of `mcp list --json`.
type mcpServer struct {
	Server string `json:"server"`
	Type   string `json:"type"`
	State  string `json:"state"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
}

// mcpListFlags is `reasonix mcp list [--json]`.
func mcpListFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	asJSON := fs.Bool("json", false, "print the servers as JSON")
	return func(_ []string, stdout, stderr io.Writer) error { return mcpList(*file, *asJSON, stdout, stderr) }
}

// mcpList is `reasonix mcp list`: start every configured server, wait
// for it, and show its state and tool count.
func mcpList(file string, asJSON bool, stdout, _ io.Writer) error {
	cfg, err := loadConfig(file, false)
	if err != nil {
		return err
	}
	workdir, err := workspaceDir("")
	if err != nil {
		return err
	}
	if len(cfg.Plugins) == 0 {
		if asJSON {
			fmt.Fprintln(stdout, "[]")
			return nil
		}
		fmt.Fprintln(stdout, "no MCP servers are configured ([[plugins]] or .mcp.json)")
		return nil
	}
	ctx := context.Background()
	m, err := session.StartPlugins(ctx, cfg, cfg.Plugins, workdir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return &configError{fmt.Errorf("[[plugins]]: %w", err)}
	}
	defer m.Stop(ctx)
	if asJSON {
		list := []mcpServer{}
		for _, s := range m.Status() {
			v := mcpServer{Server: s.Server, Type: s.Type, State: string(s.State), Tools: s.Tools}
			if s.Err != nil {
				v.Error = s.Err.Error()
			}
			list = append(list, v)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
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
