package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
)

// gcFlags is `reasonix gc [--dry-run] [--json]`: garbage collection on a
// running service, through its API, so it works against a remote one.
// There is no local mode: what a node's directories hold is judged by
// the node holding them, and the service collects on its own every hour.
func gcFlags(fs *flag.FlagSet) action {
	dry := fs.Bool("dry-run", false, "list what would be removed and what is kept and why; remove nothing")
	asJSON := fs.Bool("json", false, "print the service's JSON")
	// Not the client's 30 s: a first prune of months of history takes
	// minutes on a busy store.
	timeout := fs.Duration("timeout", 30*time.Minute, "how long to wait for the service to finish")
	return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
		if *timeout <= 0 {
			return usageErrorf("--timeout must be positive")
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		rep, err := c.GC(ctx, *dry)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(rep)
		}
		return printGC(rep, stdout)
	})
}

// printGC writes a GC report as a table: task, what, action, reason.
func printGC(rep apitype.GCReport, stdout io.Writer) error {
	if len(rep.Items) == 0 {
		fmt.Fprintf(stdout, "nothing to collect on node %s\n", rep.Node)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tWHAT\tACTION\tREASON")
	for _, it := range rep.Items {
		action := it.Action
		if rep.DryRun && action == apitype.GCRemove {
			action = "would remove"
		}
		reason := it.Reason
		if it.Bytes > 0 {
			reason += " (" + byteSize(it.Bytes) + ")"
		}
		if it.Error != "" {
			action, reason = "failed", reason+": "+it.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.TaskID, it.What, action, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "node %s: %s %d (%s of history), kept %d\n", rep.Node, verb, rep.Removed, byteSize(rep.Bytes), rep.Kept)
	return nil
}

// byteSize is n in B, KB or MB (powers of 1024), one decimal.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
