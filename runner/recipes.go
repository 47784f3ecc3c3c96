package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/runner/session"
	"reasonix/runner/workspace"
)

// BaseReader is implemented by Workspaces that can read a workspace's base
// commit (NewWorkspaces does). Without it, only the user's own recipes
// exist for a workspace.
type BaseReader interface {
	// ReadBase returns the files under each repository-relative dir as
	// they are in the workspace's base commit.
	ReadBase(ctx context.Context, spec *WorkspaceSpec, dirs ...string) (map[string][]recipe.File, error)
}

var _ BaseReader = gitWorkspaces{}

func (g gitWorkspaces) ReadBase(ctx context.Context, spec *WorkspaceSpec, dirs ...string) (map[string][]recipe.File, error) {
	got, err := g.m.ReadBase(ctx, workspace.Spec{Name: spec.Name, Repo: spec.Repo, Base: spec.Base}, dirs...)
	if err != nil {
		return nil, fmt.Errorf("runner: workspace: %w", err)
	}
	out := make(map[string][]recipe.File, len(got))
	for dir, files := range got {
		for _, f := range files {
			out[dir] = append(out[dir], recipe.File{Path: f.Path, Data: f.Data, Refused: f.Skipped})
		}
	}
	return out, nil
}

// Recipes loads the commands (the skills among them) and sub-agent
// profiles a task in workspace ("" for a scratch directory) may use; see
// LoadRecipes.
func (s *Service) Recipes(ctx context.Context, workspaceName string) (*recipe.Commands, *recipe.Profiles, error) {
	cs, ps, err := LoadRecipes(ctx, s.set.Home(), &s.set.Skills, s.cfg.Workspaces, s.workspaceSpec(workspaceName))
	if err != nil {
		return nil, nil, err
	}
	for _, w := range cs.Warnings {
		s.log.Warn("runner: "+w.String(), "workspace", workspaceName)
	}
	s.logRecipeWarnings(workspaceName, ps.Warnings)
	return cs, ps, nil
}

// LoadRecipes reads the user's recipes from the Reasonix home (and the
// skills of the [skills] paths, sk may be nil), then the project's from
// spec's base commit (when ws is a BaseReader and spec is not nil), which
// win on a clash. A task's own changes never count. Every skill is a
// command too, unless a command file has its name. Malformed files are
// Warnings of the returned sets; an error means the repository could not
// be read.
func LoadRecipes(ctx context.Context, home string, sk *config.Skills, ws Workspaces, spec *WorkspaceSpec) (*recipe.Commands, *recipe.Profiles, error) {
	if sk == nil {
		sk = &config.Skills{}
	}
	var cmdLayers []recipe.Layer
	var warns []recipe.Warning
	if home != "" {
		files, err := recipe.ReadDir(filepath.Join(home, recipe.UserCommandsDir), home)
		if err != nil {
			warns = append(warns, recipe.Warning{Scope: recipe.ScopeUser, Path: recipe.UserCommandsDir, Problem: err.Error()})
		}
		cmdLayers = append(cmdLayers, recipe.Layer{Scope: recipe.ScopeUser, Files: files})
	}
	skillLayers, skillWarns := session.DiskSkillLayers(home, sk)
	warns = append(warns, skillWarns...)
	if br, ok := ws.(BaseReader); ok && spec != nil {
		dirs := []string{recipe.ProjectCommandsDir}
		if !sk.Excluded(config.ProjectSkillsDir) {
			dirs = append(dirs, recipe.ProjectSkillsDir)
		}
		got, err := br.ReadBase(ctx, spec, dirs...)
		if err != nil {
			return nil, nil, err
		}
		cmdLayers = append(cmdLayers, recipe.Layer{Scope: recipe.ScopeProject, Files: got[recipe.ProjectCommandsDir]})
		skillLayers = append(skillLayers, recipe.Layer{Scope: recipe.ScopeProject, Files: got[recipe.ProjectSkillsDir]})
	}
	cs := recipe.LoadCommands(cmdLayers...)
	skills := recipe.LoadSkills(recipe.SkillOptions{Disabled: sk.DisabledSkills}, skillLayers...)
	skills.Commands(cs)
	ps := skills.Profiles()
	cs.Warnings = append(warns, cs.Warnings...)
	ps.Warnings = skills.Warnings
	return cs, ps, nil
}

// LoadSkills reads the skills of a workspace as a task of it sees them
// (`reasonix skills list`): the service's disk roots, then the
// repository's .reasonix/skills at spec's base, read like LoadRecipes'.
// Skipped files are the set's Warnings.
func LoadSkills(ctx context.Context, home string, sk *config.Skills, ws Workspaces, spec *WorkspaceSpec) (*recipe.Skills, error) {
	if sk == nil {
		sk = &config.Skills{}
	}
	layers, warns := session.DiskSkillLayers(home, sk)
	if br, ok := ws.(BaseReader); ok && spec != nil && !sk.Excluded(config.ProjectSkillsDir) {
		got, err := br.ReadBase(ctx, spec, recipe.ProjectSkillsDir)
		if err != nil {
			return nil, err
		}
		layers = append(layers, recipe.Layer{Scope: recipe.ScopeProject, Files: got[recipe.ProjectSkillsDir]})
	}
	skills := recipe.LoadSkills(recipe.SkillOptions{Disabled: sk.DisabledSkills}, layers...)
	skills.Warnings = append(warns, skills.Warnings...)
	return skills, nil
}

// maxArgs bounds a command's arguments.
const maxArgs = 64

// expandCommand turns a request that names a command into its prompt: the
// command's rendered body, then the request's own Prompt (a webhook's
// delimited payload) after a blank line. The command adds text and
// nothing else: posture, approvers and the rest of the request stay as the
// intake set them. An unknown command is ErrInvalid naming the nearest
// known ones.
func (s *Service) expandCommand(ctx context.Context, req *TaskRequest) error {
	if req.Command == "" {
		return nil
	}
	name := strings.TrimPrefix(req.Command, "/")
	if _, _, ok := recipe.CommandWord("/" + name); !ok {
		return invalidf("%q is not a command name: use letters, digits, '-', '_' and ':'", req.Command)
	}
	if len(req.Args) > maxArgs {
		return invalidf("at most %d command arguments are accepted", maxArgs)
	}
	if err := checkWorkspace(s.set, req.Workspace); err != nil {
		return err
	}
	// Plugins are asked only for a name of the MCP form that no file
	// defines, so an ordinary command never starts them.
	cs, _, err := s.Recipes(ctx, req.Workspace)
	if err == nil && isMCPName(name) {
		if _, ok := cs.Lookup(name); !ok {
			s.addMCPPrompts(ctx, cs)
		}
	}
	if err != nil {
		ref := newRef()
		s.log.Error("runner: loading commands", "ref", ref, "workspace", req.Workspace, "err", err)
		return failf(ErrUnavailable, "the commands of workspace %q could not be read; quote ref %s", req.Workspace, ref)
	}
	cmd, ok := cs.Lookup(name)
	if !ok {
		return invalidf("%s", UnknownCommand(name, cs.Names()))
	}
	var args []string
	for _, a := range req.Args {
		args = append(args, recipe.SplitArgs(a)...)
	}
	prompt, err := s.RenderCommand(ctx, cmd, args)
	if err != nil {
		ref := newRef()
		s.log.Error("runner: rendering an MCP prompt", "ref", ref, "command", name, "err", err)
		return failf(ErrUnavailable, "the prompt /%s could not be rendered; quote ref %s", name, ref)
	}
	if strings.TrimSpace(req.Prompt) != "" {
		prompt += "\n\n" + req.Prompt
	}
	req.Prompt = prompt
	if req.Origin == nil {
		req.Origin = map[string]string{}
	}
	req.Origin["command"] = cmd.Name
	return nil
}

// UnknownCommand is the answer to a command nobody defined, with the
// nearest known names.
func UnknownCommand(name string, known []string) string {
	msg := fmt.Sprintf("unknown command /%s", name)
	if near := recipe.Nearest(name, known); len(near) > 0 {
		return msg + "; did you mean /" + strings.Join(near, ", /") + "?"
	}
	if len(known) == 0 {
		return msg + "; no commands are defined (add .reasonix/commands/NAME.md to the repository)"
	}
	return msg + "; known: /" + strings.Join(known[:min(len(known), 10)], ", /")
}
