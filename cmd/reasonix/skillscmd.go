package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/session"
	"reasonix/runner/workspace"
)

// skillsCommands is `reasonix skills ...`.
func skillsCommands() []*command {
	return []*command{{
		name: "list", summary: "list the skills a task of a workspace is offered",
		about: "Lists the skills a task sees (the Reasonix home's skills/, the [skills] paths roots and the\n" +
			"repository's .reasonix/skills; by name the repository's win over paths, which win over the home's)\n" +
			"with their description, where each comes from (base commit, checkout, user or paths), who may start\n" +
			"it (model: listed in the prompt's index; manual: only /name) and how it runs (inline or subagent),\n" +
			"then each skipped file and why on standard error. --workspace names a [[workspaces]] entry (read\n" +
			"from its base commit, as the service does) or a directory (default: the current one, as `run` does).",
		example: "reasonix skills list\nreasonix skills list --workspace app --json",
		flags: func(fs *flag.FlagSet) action {
			file := configFileFlag(fs)
			ws := fs.String("workspace", "", "a [[workspaces]] `name` or a directory")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(_ []string, stdout, stderr io.Writer) error {
				cfg, err := loadConfig(*file, false)
				if err != nil {
					return err
				}
				skills, fromBase, err := loadSkillSet(cfg, *ws)
				if err != nil {
					return err
				}
				return printSkills(skills, fromBase, *asJSON, stdout, stderr)
			}
		},
	}}
}

// loadSkillSet reads the skills for where: a [[workspaces]] name (its base
// commit; fromBase true) or a directory on disk ("" is the current one).
func loadSkillSet(cfg *config.Config, where string) (skills *recipe.Skills, fromBase bool, err error) {
	for _, w := range cfg.Workspaces {
		if w.Name != where {
			continue
		}
		m, err := workspace.New(workspace.Config{Root: filepath.Join(cfg.DataDir(), "workspaces"), Env: session.SetupEnv(cfg)})
		if err != nil {
			return nil, false, &configError{fmt.Errorf("[[workspaces]]: %w", err)}
		}
		spec := &runner.WorkspaceSpec{Name: w.Name, Repo: w.Repo, Base: w.Base}
		skills, err := runner.LoadSkills(context.Background(), cfg.Home(), &cfg.Skills, runner.NewWorkspaces(m), spec)
		if err != nil {
			return nil, false, &configError{err}
		}
		return skills, true, nil
	}
	dir, err := workspaceDir(where)
	if err != nil {
		return nil, false, err
	}
	return session.CheckoutSkills(cfg.Home(), &cfg.Skills, dir), false, nil
}

// skillView is one line of `skills list`.
type skillView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Source is where the skill comes from: "base commit" (the workspace's
	// repository at its base), "checkout" (a directory's .reasonix/skills),
	// "user" (the home's skills/) or "paths" (a [skills] paths root).
	Source string `json:"source"`
	// Invocation is "model" (in the index: the model may start it) or
	// "manual" (only /name).
	Invocation string `json:"invocation"`
	// RunAs is "inline" or "subagent".
	RunAs string `json:"run_as"`
	Path  string `json:"path"`
}

func viewSkill(sk *recipe.Skill, fromBase bool) skillView {
	v := skillView{Name: sk.Name, Description: sk.Description(), Invocation: "model", RunAs: "inline", Path: sk.Path}
	switch sk.Scope {
	case recipe.ScopeProject:
		v.Source = "checkout"
		if fromBase {
			v.Source = "base commit"
		}
	case recipe.ScopePath:
		v.Source = "paths"
	default:
		v.Source = string(sk.Scope)
	}
	if sk.Manual() {
		v.Invocation = "manual"
	}
	if sk.Subagent() {
		v.RunAs = "subagent"
	}
	return v
}

func printSkills(skills *recipe.Skills, fromBase, asJSON bool, stdout, stderr io.Writer) error {
	views := []skillView{}
	for _, sk := range skills.List() {
		views = append(views, viewSkill(sk, fromBase))
	}
	if asJSON {
		out := struct {
			Skills  []skillView      `json:"skills"`
			Skipped []recipe.Warning `json:"skipped"`
		}{Skills: views, Skipped: skills.Warnings}
		if out.Skipped == nil {
			out.Skipped = []recipe.Warning{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, w := range skills.Warnings {
		fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
	}
	if len(views) == 0 {
		fmt.Fprintln(stdout, "no skills: add .reasonix/skills/NAME/SKILL.md to the repository, or a [skills] paths root")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tINVOCATION\tRUN AS\tDESCRIPTION")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, v.Source, v.Invocation, v.RunAs, v.Description)
	}
	return tw.Flush()
}
