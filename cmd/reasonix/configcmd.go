package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
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
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if _, ref, err := buildProvider(cfg, ""); err != nil {
		return err
	} else {
		fmt.Fprintf(stdout, "model %s/%s (%s; %s)\n", ref.Name, ref.Model,
			windowNote(ref.ContextWindow, cfg.Agent.EffectiveCompactRatio()), priceNote(cfg, ref))
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
	if _, err := webhook.Compile(cfg.Webhooks, secretenv.Lookup); err != nil {
		return &configError{err}
	}
	for _, h := range cfg.Webhooks {
		fmt.Fprintf(stdout, "webhook %s: POST /hooks/%s (%s, posture %s)\n", h.Name, h.Name, h.Kind, h.Posture)
	}
	fmt.Fprintln(stdout, "configuration ok")
	return nil
}

// configCompactRatioFlags is `reasonix config compact-ratio [VALUE]`.
func configCompactRatioFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	return func(args []string, stdout, _ io.Writer) error {
		if len(args) == 1 {
			v, err := strconv.ParseFloat(strings.TrimSpace(args[0]), 64)
			if err != nil {
				return usageErrorf("compact-ratio: %q is not a number; give a ratio such as 0.8", args[0])
			}
			if err := config.CheckCompactRatio(v); err != nil {
				return usageErrorf("compact-ratio: %v", err)
			}
			home, err := config.HomeDir()
			if err != nil {
				return &configError{err}
			}
			path, err := config.WriteCompactRatio(home, v)
			if err != nil {
				return &configError{err}
			}
			fmt.Fprintf(stdout, "wrote compact_ratio = %g to %s\n", v, path)
		}
		cfg, err := loadConfig(*file, false)
		if err != nil {
			return err
		}
		from := cfg.Origin("agent.compact_ratio")
		if from == "" {
			from = "default"
		}
		fmt.Fprintf(stdout, "compact_ratio = %g (%s)\n", cfg.Agent.EffectiveCompactRatio(), from)
		return nil
	}
}

// windowNote says when the model's context is compacted.
func windowNote(window int, ratio float64) string {
	if window <= 0 {
		return "context window unset: never compacted"
	}
	return fmt.Sprintf("context window %d tokens, compacted at %d", window, int(math.Floor(float64(window)*ratio)))
}

// priceNote says what the default model costs, or that it is unpriced and
// what that means for the cost budgets that are set.
func priceNote(cfg *config.Config, ref config.ProviderRef) string {
	if ref.Priced {
		return fmt.Sprintf("$%g in, $%g cached in, $%g out per million tokens", ref.Price.Input,
			cmp.Or(ref.Price.CachedInput, ref.Price.Input), ref.Price.Output)
	}
	note := "unpriced: no prices entry, so its cost is reported as unpriced"
	if cfg.Runner.MaxCostPerTask > 0 || cfg.Agent.GoalBudgetUSD > 0 {
		note += "; the cost budgets do not count its calls"
	}
	return note
}
