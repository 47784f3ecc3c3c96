package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/httpapi"
)

// nodesFlags is `reasonix nodes`: like `webhooks list`, it reads the
// configured store directly, so it answers while every node is down too.
func nodesFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	return func(_ []string, stdout, stderr io.Writer) error { return nodesList(*file, *asJSON, stdout, stderr) }
}

func nodesList(file string, asJSON bool, stdout, stderr io.Writer) error {
	cfg, err := loadServiceConfig(file)
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := openStore(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now()
	nodes, err := runner.ListNodes(ctx, st, cfg.Serve.StaleAfter, now)
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if asJSON {
		// The same record GET /api/v1/nodes answers with.
		out := apitype.NodeList{Nodes: make([]apitype.Node, 0, len(nodes))}
		for _, n := range nodes {
			out.Nodes = append(out.Nodes, httpapi.ViewNode(n))
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(nodes) == 0 {
		fmt.Fprintln(stdout, "no node has run on this store yet (start one with `reasonix serve`)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tVERSION\tADDR\tHEARTBEAT\tRUNNING\tTASKS")
	for _, n := range nodes {
		state := string(n.State)
		if n.Stale {
			state += " (stale)"
		}
		if n.Leader {
			state += ", leader"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ago\t%d/%d\t%s\n", n.ID, state, n.Version, dash(n.Addr),
			now.Sub(n.HeartbeatAt).Round(time.Second), len(n.Running), n.MaxTasks, dash(strings.Join(n.Running, ",")))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
