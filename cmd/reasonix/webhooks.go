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

	"reasonix/runner/apitype"
	"reasonix/runner/httpapi"
	"reasonix/runner/webhook"
)

// webhooksCommands are `reasonix webhooks list`. Like `tokens`, it reads
// the configuration and the store directly: no running service and no
// webhook secret is needed to see what arrived.
func webhooksCommands() []*command {
	return []*command{{
		name: "list", summary: "list the configured webhooks and their recent deliveries",
		about: "Lists every [[webhooks]] entry (name, kind, path, events, posture) and its most recent deliveries:\n" +
			"accepted (with the task started), duplicate (with the first task), ignored (ping, event or filter)\n" +
			"and rejected (bad signature, too large, template failure) with the reason. Bodies and signatures are\n" +
			"never stored.",
		example: "reasonix webhooks list\nreasonix webhooks list --recent 20 --json",
		flags: func(fs *flag.FlagSet) action {
			file := configFileFlag(fs)
			recent := fs.Int("recent", 5, "show the `N` most recent deliveries of each webhook (at most 100)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(_ []string, stdout, stderr io.Writer) error {
				if *recent < 0 || *recent > 100 {
					return usageErrorf("--recent must be between 0 and 100")
				}
				return webhooksList(*file, *recent, *asJSON, stdout, stderr)
			}
		},
	}}
}

func webhooksList(file string, recent int, asJSON bool, stdout, stderr io.Writer) error {
	cfg, err := loadServiceConfig(file)
	if err != nil {
		return err
	}
	if len(cfg.Webhooks) == 0 && !asJSON {
		fmt.Fprintln(stdout, "no webhooks are configured (add a [[webhooks]] entry; see reasonix.example.toml)")
		return nil
	}
	ctx := context.Background()
	st, err := openStore(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer st.Close()
	n := recent
	if n == 0 {
		n = 1 // the store reads 0 as "all"; the rows are dropped below
	}
	list, err := webhook.List(ctx, st, cfg.Webhooks, n)
	if err != nil {
		return err
	}
	if recent == 0 {
		for i := range list {
			list[i].Recent = list[i].Recent[:0]
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		// The same record GET /api/v1/webhooks answers with.
		out := apitype.WebhookList{Webhooks: make([]apitype.Webhook, 0, len(list))}
		for _, h := range list {
			out.Webhooks = append(out.Webhooks, httpapi.ViewWebhook(h))
		}
		return enc.Encode(out)
	}
	for i, h := range list {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		events := strings.Join(h.Events, ",")
		if events == "" {
			events = "(all)"
		}
		goal := ""
		switch {
		case h.Goal && h.BudgetUSD > 0:
			goal = fmt.Sprintf("  goal (budget $%.2f)", h.BudgetUSD)
		case h.Goal:
			goal = "  goal"
		}
		fmt.Fprintf(stdout, "%s  %s  POST %s  events %s  posture %s%s  workspace %s\n", h.Name, h.Kind, h.Path, events,
			h.Posture, goal, cmpString(h.Workspace, "(scratch)"))
		if recent == 0 {
			continue
		}
		if len(h.Recent) == 0 {
			fmt.Fprintln(stdout, "  no deliveries yet")
			continue
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TIME\tOUTCOME\tSTATUS\tDELIVERY\tEVENT\tTASK OR REASON")
		for _, d := range h.Recent {
			what := d.TaskID
			if what == "" {
				what = d.Reason
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\n", d.CreatedAt.Local().Format(time.DateTime), d.Outcome, d.Status,
				cmpString(d.DeliveryID, "-"), cmpString(d.Event, "-"), what)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
