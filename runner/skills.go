package runner

import (
	"context"
	"fmt"

	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/runner/session"
	"reasonix/runner/workspace"
)

// CommitTreeReader is implemented by Workspaces that can read whole
// directories at a commit the service recorded (NewWorkspaces does).
// Without it a task has only the skills on the service's disk.
type CommitTreeReader interface {
	// ReadBaseAt returns the files under each repository-relative dir as
	// they are in commit, every object hash-checked (workspace.ReadBaseAt).
	ReadBaseAt(ctx context.Context, spec *WorkspaceSpec, commit string, dirs ...string) (map[string][]recipe.File, error)
}

var _ CommitTreeReader = gitWorkspaces{}

func (g gitWorkspaces) ReadBaseAt(ctx context.Context, spec *WorkspaceSpec, commit string, dirs ...string) (map[string][]recipe.File, error) {
	got, err := g.m.ReadBaseAt(ctx, workspace.Spec{Name: spec.Name, Repo: spec.Repo, Base: spec.Base}, commit, dirs...)
	if err != nil {
		return nil, fmt.Errorf("runner: workspace: %w", err)
	}
	return recipeFiles(got), nil
}

func recipeFiles(got map[string][]workspace.BaseFile) map[string][]recipe.File {
	out := make(map[string][]recipe.File, len(got))
	for dir, files := range got {
		for _, f := range files {
			out[dir] = append(out[dir], recipe.File{Path: f.Path, Data: f.Data, Refused: f.Skipped})
		}
	}
	return out
}

// taskSkills loads the skills of a task in ws: the service's own (home,
// [skills] paths), then the repository's as they are in the task's base
// commit — the commit the task started from, not the branch's tip and
// never what the task wrote — so every resume of the task sees the same
// index. A repository that cannot be read leaves its skills out; the task
// still runs.
func (s *Service) taskSkills(ctx context.Context, ws *Workdir) (*recipe.Skills, error) {
	sk := &s.set.Skills
	layers, warns := session.DiskSkillLayers(s.set.Home(), sk)
	var err error
	tr, ok := s.cfg.Workspaces.(CommitTreeReader)
	if spec := s.workspaceSpec(ws.Spec); ok && spec != nil && ws.Base != "" && !sk.Excluded(config.ProjectSkillsDir) {
		var got map[string][]recipe.File
		if got, err = tr.ReadBaseAt(ctx, spec, ws.Base, recipe.ProjectSkillsDir); err == nil {
			layers = append(layers, recipe.Layer{Scope: recipe.ScopeProject, Files: got[recipe.ProjectSkillsDir]})
		}
	}
	skills := recipe.LoadSkills(recipe.SkillOptions{Disabled: sk.DisabledSkills}, layers...)
	s.logRecipeWarnings(ws.Spec, append(warns, skills.Warnings...))
	return skills, err
}

// logRecipeWarnings logs skipped skill files ([skills] suppress_warnings
// keeps them at debug level).
func (s *Service) logRecipeWarnings(workspaceName string, warns []recipe.Warning) {
	for _, w := range warns {
		if s.set.Skills.SuppressWarnings {
			s.log.Debug("runner: "+w.String(), "workspace", workspaceName)
			continue
		}
		s.log.Warn("runner: "+w.String(), "workspace", workspaceName)
	}
}
