package main

import (
	"cmp"
	"fmt"
	"io"
	"os"

	"reasonix/config"
	"reasonix/runner/webhook"
)

// configCheck is `reasonix config check`.
func configCheck(file string, stdout, _ io.Writer) error {
	cfg, err := loadConfig(file, false)
	if err != nil {
		return err
	}
	for _, src := range cfg.Sources() {
		fmt.Fprintf(stdout, "read %s\n", src)
	}
	if _, ref, err := buildProvider(cfg, ""); err != nil {
		return err
	} else {
		fmt.Fprintf(stdout, "model %s/%s%s\n", ref.Name, ref.Model, priceNote(cfg, ref))
	}
	if _, err := buildPolicy(cfg); err != nil {
		return err
	}
	if err := checkWorkspaces(cfg, func(ws config.Workspace) {
		fmt.Fprintf(stdout, "workspace %s: %s (%s)\n", ws.Name, ws.Repo, ws.Base)
	}); err != nil {
		return err
	}
	// The same check serve makes: secrets set, templates and filters parse.
	if _, err := webhook.Compile(cfg.Webhooks, os.LookupEnv); err != nil {
		return &configError{err}
	}
	for _, h := range cfg.Webhooks {
		fmt.Fprintf(stdout, "webhook %s: POST /hooks/%s (%s, posture %s)\n", h.Name, h.Name, h.Kind, h.Posture)
	}
	fmt.Fprintln(stdout, "configuration ok")
	return nil
}

// priceNote says what the default model costs, or that it is unpriced and
// what that means for the cost budgets that are set.
func priceNote(cfg *config.Config, ref config.ProviderRef) string {
	if ref.Priced {
		return fmt.Sprintf(" ($%g in, $%g cached in, $%g out per million tokens)", ref.Price.Input,
			cmp.Or(ref.Price.CachedInput, ref.Price.Input), ref.Price.Output)
	}
	note := " (unpriced: no prices entry, so its cost is reported as unpriced"
	if cfg.Runner.MaxCostPerTask > 0 || cfg.Agent.GoalBudgetUSD > 0 {
		note += "; the cost budgets do not count its calls"
	}
	return note + ")"
}
