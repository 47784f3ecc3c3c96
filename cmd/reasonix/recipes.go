package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"reasonix/agent"
	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/session"
	"reasonix/runner/workspace"
)

// commandsCommands is `reasonix commands ...`.
func commandsCommands() []*command {
	return []*command{{
		name: "list", summary: "list the custom commands a run or a chat message can name",
		about: "Lists the custom commands (.reasonix/commands/**/*.md in the repository and commands/ in the Reasonix\n" +
			"home; the repository's win on a clash) with their descriptions and argument hints, and every file\n" +
			"that was skipped and why. --workspace names a [[workspaces]] entry (read from its base branch, as the\n" +
			"service does) or a directory (default: the current one, as `run` does). The prompts of the configured\n" +
			"[[plugins]] are listed too, as /mcp__<server>__<prompt> (scope mcp); --no-mcp leaves the plugins unstarted.",
		example: "reasonix commands list\nreasonix commands list --workspace app --json",
		flags: func(fs *flag.FlagSet) action {
			file := configFileFlag(fs)
			ws := fs.String("workspace", "", "a [[workspaces]] `name` or a directory")
			asJSON := fs.Bool("json", false, "print JSON")
			noMCP := fs.Bool("no-mcp", false, "do not start the [[plugins]] to list their prompts")
			return func(_ []string, stdout, stderr io.Writer) error {
				cfg, err := loadConfig(*file, false)
				if err != nil {
					return err
				}
				cs, ps, err := loadRecipes(cfg, *ws)
				if err != nil {
					return err
				}
				cs.Warnings = append(cs.Warnings, ps.Warnings...) // skipped skill files too
				if !*noMCP {
					if err := addPluginPrompts(cfg, cs, stderr); err != nil {
						return err
					}
				}
				return printCommands(cs, *asJSON, stdout, stderr)
			}
		},
	}}
}

// addPluginPrompts starts the configured [[plugins]] for as long as it
// takes to list their prompts as commands; a plugin that does not start is
// warned about and left out.
func addPluginPrompts(cfg *config.Config, cs *recipe.Commands, stderr io.Writer) error {
	if len(cfg.Plugins) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := session.StartPlugins(ctx, cfg, cfg.Plugins, "", log)
	if err != nil {
		return &configError{err}
	}
	defer func() {
		if err := m.Stop(context.Background()); err != nil {
			fmt.Fprintf(stderr, "reasonix: warning: stopping the plugins: %v\n", err)
		}
	}()
	runner.AddMCPPrompts(ctx, cs, m)
	return nil
}

// loadRecipes reads the recipes for where: a [[workspaces]] name (its
// base commit) or a directory on disk ("" is the current directory).
func loadRecipes(cfg *config.Config, where string) (*recipe.Commands, *recipe.Profiles, error) {
	for _, w := range cfg.Workspaces {
		if w.Name != where {
			continue
		}
		m, err := workspace.New(workspace.Config{Root: filepath.Join(cfg.DataDir(), "workspaces"), Env: session.SetupEnv(cfg)})
		if err != nil {
			return nil, nil, &configError{fmt.Errorf("[[workspaces]]: %w", err)}
		}
		spec := &runner.WorkspaceSpec{Name: w.Name, Repo: w.Repo, Base: w.Base}
		cs, ps, err := runner.LoadRecipes(context.Background(), cfg.Home(), &cfg.Skills, runner.NewWorkspaces(m), spec)
		if err != nil {
			return nil, nil, &configError{err}
		}
		return cs, ps, nil
	}
	dir, err := workspaceDir(where)
	if err != nil {
		return nil, nil, err
	}
	cs, _ := recipe.LoadDirs(cfg.Home(), dir)
	skills := session.CheckoutSkills(cfg.Home(), &cfg.Skills, dir)
	skills.Commands(cs)
	ps := skills.Profiles()
	ps.Warnings = skills.Warnings
	return cs, ps, nil
}

func printCommands(cs *recipe.Commands, asJSON bool, stdout, stderr io.Writer) error {
	if asJSON {
		type view struct {
			Name         string `json:"name"`
			Description  string `json:"description"`
			ArgumentHint string `json:"argument_hint"`
			Scope        string `json:"scope"`
			Path         string `json:"path"`
		}
		out := struct {
			Commands []view           `json:"commands"`
			Skipped  []recipe.Warning `json:"skipped"`
		}{Commands: []view{}, Skipped: cs.Warnings}
		for _, c := range cs.List() {
			out.Commands = append(out.Commands, view{c.Name, c.Description, c.ArgumentHint, string(c.Scope), c.Path})
		}
		if out.Skipped == nil {
			out.Skipped = []recipe.Warning{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, w := range cs.Warnings {
		fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
	}
	list := cs.List()
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no custom commands: add .reasonix/commands/NAME.md to the repository")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, c := range list {
		fmt.Fprintf(tw, "/%s %s\t%s\t(%s)\n", c.Name, c.ArgumentHint, c.Description, c.Scope)
	}
	return tw.Flush()
}

// runPrompt is what `reasonix run` sends the model: the task as typed, or,
// when its first word names a custom command (/name, no second slash), the
// command's body rendered with the rest as arguments. An unknown command
// is a usage error suggesting the nearest names; nothing reaches a model.
func runPrompt(cfg *config.Config, sess *session.Session, workdir, task string, stderr io.Writer) (string, error) {
	name, rest, ok := recipe.CommandWord(task)
	if _, builtin := agent.ParseCompactCommand(task); !ok || builtin {
		return task, nil // /compact is the agent's own action, winning over a command of that name
	}
	cs, _ := recipe.LoadDirs(cfg.Home(), workdir)
	for _, w := range cs.Warnings {
		fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
	}
	sess.Skills().Commands(cs) // the session's skills, read before it started
	cmd, found := cs.Lookup(name)
	if found {
		return cmd.Render(recipe.SplitArgs(rest)), nil
	}
	known := cs.Names()
	if strings.HasPrefix(name, "mcp__") {
		// An MCP prompt of a configured plugin (seed §3.8).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		text, found, err := sess.MCPPrompt(ctx, name, recipe.SplitArgs(rest))
		if err != nil {
			return "", &configError{err}
		}
		if found {
			return text, nil
		}
		known = append(known, sess.MCPPromptNames(ctx)...)
	}
	return "", usageErrorf("%s", runner.UnknownCommand(name, known))
}
