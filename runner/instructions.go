package runner

import (
	"context"
	"fmt"

	"reasonix/agent/recipe"
	"reasonix/runner/workspace"
)

// CommitReader is implemented by Workspaces that can read files at a
// commit the service recorded (NewWorkspaces does). Without it a task has
// only the user's instruction files.
type CommitReader interface {
	// ReadAt returns the named repository-relative files as they are in
	// commit; a missing one is left out.
	ReadAt(ctx context.Context, spec *WorkspaceSpec, commit string, paths ...string) ([]recipe.File, error)
}

var _ CommitReader = gitWorkspaces{}

func (g gitWorkspaces) ReadAt(ctx context.Context, spec *WorkspaceSpec, commit string, paths ...string) ([]recipe.File, error) {
	got, err := g.m.ReadAt(ctx, workspace.Spec{Name: spec.Name, Repo: spec.Repo, Base: spec.Base}, commit, paths...)
	if err != nil {
		return nil, fmt.Errorf("runner: workspace: %w", err)
	}
	out := make([]recipe.File, len(got))
	for i, f := range got {
		out[i] = recipe.File{Path: f.Path, Data: f.Data, Refused: f.Skipped}
	}
	return out, nil
}

// instructionsEvent is the event naming the instruction files a task's
// prompt holds, written when its first run starts.
const instructionsEvent = "instructions"

// taskInstructions loads the instruction files of a task in ws: the
// user's under the Reasonix home, then the repository root's as they are
// in the task's base commit — never what the task itself wrote, which
// could otherwise steer the next run of the same task. A repository that
// cannot be read is logged and leaves its files out; the task still runs.
func (s *Service) taskInstructions(ctx context.Context, ws *Workdir) (recipe.Instructions, error) {
	var layers []recipe.Layer
	if home := s.set.Home(); home != "" {
		layers = append(layers, recipe.Layer{Scope: recipe.ScopeUser, Files: recipe.ReadInstructionFiles(home, "")})
	}
	var err error
	if files, e := s.baseInstructionFiles(ctx, ws, ""); e != nil {
		err = e
	} else {
		layers = append(layers, recipe.Layer{Scope: recipe.ScopeProject, Files: files})
	}
	return recipe.LoadInstructions(0, layers...), err
}

// baseInstructionFiles reads the instruction files of the repository
// directories dirs at ws's base commit; none for a scratch directory.
func (s *Service) baseInstructionFiles(ctx context.Context, ws *Workdir, dirs ...string) ([]recipe.File, error) {
	cr, ok := s.cfg.Workspaces.(CommitReader)
	spec := s.workspaceSpec(ws.Spec)
	if !ok || spec == nil || ws.Base == "" {
		return nil, nil
	}
	return cr.ReadAt(ctx, spec, ws.Base, recipe.InstructionPaths(dirs...)...)
}
