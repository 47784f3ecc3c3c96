package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/session"
	"reasonix/runner/webhook"
)

// configCheck is `reasonix config check`: it runs every check serve
// starts by (configRules) and reports every problem at once, one a line,
// rather than the first; config check also requires a usable model, which
// serve starts without. A file that does not load is reported with
// every problem the decoder can tell apart, and the checks that need no
// file (fileFreeChecks) still run.
func configCheck(file string, stdout, _ io.Writer) error {
	cfg, err := loadConfig(file, false)
	if err != nil {
		// The file's problems (each with its line), then every check
		// that does not need the file, so one run shows them all.
		errs := []error{err}
		fmt.Fprintln(stdout, "the configuration did not load; the checks that do not need it:")
		for _, c := range fileFreeChecks() {
			switch {
			case c.err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", c.what, c.err))
			case c.warn != "":
				fmt.Fprintf(stdout, "warning: %s: %s\n", c.what, c.warn)
			default:
				fmt.Fprintf(stdout, "%s: %s\n", c.what, c.ok)
			}
		}
		return &configError{errors.Join(errs...)}
	}
	for _, src := range cfg.Sources() {
		fmt.Fprintf(stdout, "read %s\n", src)
	}
	for _, w := range append(cfg.Warnings(), cfg.UnattendedWarnings()...) {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	var errs []error
	// serve's checks first, so that the error is serve's own when the
	// model is fine (a test holds the two to the same words).
	if err := checkConfig(cfg, func(ws config.Workspace) {
		fmt.Fprintf(stdout, "workspace %s: %s (%s)\n", ws.Name, ws.Repo, ws.Base)
	}); err != nil {
		errs = append(errs, err)
	}
	if _, ref, err := buildProvider(cfg, ""); err != nil {
		// A provider the rules already refused is reported once.
		if !providerRefused(cfg) {
			errs = append(errs, err)
		}
	} else {
		fmt.Fprintf(stdout, "model %s/%s (%s; %s)\n", ref.Name, ref.Model,
			windowNote(ref.ContextWindow, cfg.Agent.EffectiveCompactRatio()), priceNote(cfg, ref))
	}
	verifyPublish(context.Background(), cfg, func(ws string, id forge.Identity, err error) {
		if err != nil {
			errs = append(errs, &configError{fmt.Errorf("workspace %s: publish: %w", ws, err)})
			return
		}
		fmt.Fprintf(stdout, "workspace %s: publishes to %s as %s\n", ws, id.Project, cmp.Or(id.User, "the token's app"))
	})
	for _, h := range cfg.Webhooks {
		fmt.Fprintf(stdout, "webhook %s: POST /hooks/%s (%s, posture %s)\n", h.Name, h.Name, h.Kind, h.Posture)
	}
	switch len(errs) {
	case 0:
		fmt.Fprintln(stdout, "configuration ok")
		return nil
	case 1:
		return errs[0]
	}
	return &configError{errors.Join(errs...)}
}

// providerRefused reports whether serve's own provider rule refuses cfg.
func providerRefused(cfg *config.Config) bool {
	for _, r := range configRules(nil) {
		if r.what == "provider" {
			return r.check(cfg) != nil
		}
	}
	return false
}

// configRule is one component's validator, run over a loaded
// configuration: the check the component's constructor makes, or the
// check its first use would make, run before anything starts.
type configRule struct {
	what  string // the doctor's label
	check func(*config.Config) error
}

// configRules are the rules a loaded configuration must pass for `serve`
// to start. `config check`, `doctor` and `serve` all run this one list
// (Load has checked each key's own value before), so what `config check`
// accepts, `serve` accepts: each rule is the component's own validator,
// never a copy of it. usable, when not nil, is told each usable workspace.
func configRules(usable func(config.Workspace)) []configRule {
	return []configRule{
		// The default model's provider as a task builds it. Serve starts
		// without a model, or without its key, and warns (a fresh installation
		// runs with no configuration at all); config check, which builds the
		// provider first, requires both.
		{"provider", func(cfg *config.Config) error {
			ref, err := cfg.ResolveModel("")
			switch {
			case errors.Is(err, config.ErrNoProviders):
				return nil
			case err != nil:
				return err
			case ref.APIKeyEnv != "" && strings.TrimSpace(secretenv.Getenv(ref.APIKeyEnv)) == "":
				return nil
			}
			_, err = session.ResolveModel(cfg, "")
			return err
		}},
		{"permissions", func(cfg *config.Config) error { _, err := session.NewPolicy(cfg); return err }},
		{"sandbox", func(cfg *config.Config) error { _, _, err := session.SandboxStatus(cfg); return err }},
		// The MCP manager's rule, which the first task of a run would apply
		// (a name with "__" would not split in mcp__<server>__<tool>).
		{"plugins", func(cfg *config.Config) error {
			if err := session.MCPConfig(cfg, cfg.Plugins, "").Validate(); err != nil {
				return fmt.Errorf("[[plugins]]: %w", err)
			}
			return nil
		}},
		{"runner", func(cfg *config.Config) error { return runnerSettings(cfg).Validate() }},
		// The intake's own limits on each run a schedule would submit.
		{"schedules", runner.CheckSchedules},
		// The same check serve makes: secrets set, templates and filters parse.
		{"webhooks", func(cfg *config.Config) error { _, err := webhook.Compile(cfg.Webhooks, secretenv.Lookup); return err }},
		{"chat", func(cfg *config.Config) error { _, err := readChatTokens(cfg); return err }},
		{"api token", func(cfg *config.Config) error { _, err := apiTokenFromEnv(cfg); return err }},
		{"workspaces", func(cfg *config.Config) error { return checkWorkspaces(cfg, usable) }},
		{"publish", func(cfg *config.Config) error { _, err := publishForges(cfg); return err }},
	}
}

// checkConfig runs configRules and reports every failure, as a
// configError (exit 2).
func checkConfig(cfg *config.Config, usable func(config.Workspace)) error {
	var errs []error
	for _, r := range configRules(usable) {
		if err := r.check(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return &configError{err}
	}
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
