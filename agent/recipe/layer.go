package recipe

import (
	"fmt"
	"path/filepath"
)

// Scope says where a recipe came from. A project recipe overrides a user
// recipe of the same name.
type Scope string

// The scopes, lowest precedence first.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeMCP     Scope = "mcp"
)

// File is one file handed to a loader: a slash-separated path relative to
// the recipe root (".reasonix/commands" or the user's "commands"
// directory) and its content. A reader that met a symbolic link it will
// not follow passes the file with Refused set, so the refusal becomes a
// Warning instead of vanishing.
type File struct {
	Path    string
	Data    []byte
	Refused string
}

// Layer is the files of one scope.
type Layer struct {
	Scope Scope
	Files []File
}

// MaxFileBytes bounds one recipe file; a larger one is skipped.
const MaxFileBytes = 64 << 10

// Warning is a file a loader skipped, and why. Loading never fails on a
// bad file: the other recipes stay usable.
type Warning struct {
	Scope   Scope  `json:"scope"`
	Path    string `json:"path"`
	Problem string `json:"problem"`
}

func (w Warning) String() string {
	return fmt.Sprintf("%s recipe %s skipped: %s", w.Scope, w.Path, w.Problem)
}

// Where recipes live: inside a repository, and inside the Reasonix home
// (~/.reasonix) for the user's own.
const (
	ProjectCommandsDir = ".reasonix/commands"
	ProjectSkillsDir   = ".reasonix/skills"
	UserCommandsDir    = "commands"
	UserSkillsDir      = "skills"
)

// LoadDirs reads the user's recipes under home and the project's under
// the directory project, from disk, as `reasonix run` sees them before it
// starts. Either may be "". Unreadable roots are Warnings.
func LoadDirs(home, project string) (*Commands, *Profiles) {
	var cmdLayers, skillLayers []Layer
	var warns []Warning
	read := func(scope Scope, root, boundary string) []File {
		files, err := ReadDir(root, boundary)
		if err != nil {
			warns = append(warns, Warning{Scope: scope, Path: root, Problem: err.Error()})
		}
		return files
	}
	if home != "" {
		cmdLayers = append(cmdLayers, Layer{ScopeUser, read(ScopeUser, filepath.Join(home, UserCommandsDir), home)})
		skillLayers = append(skillLayers, Layer{ScopeUser, read(ScopeUser, filepath.Join(home, UserSkillsDir), home)})
	}
	if project != "" {
		cmdLayers = append(cmdLayers, Layer{ScopeProject, read(ScopeProject, filepath.Join(project, ProjectCommandsDir), project)})
		skillLayers = append(skillLayers, Layer{ScopeProject, read(ScopeProject, filepath.Join(project, ProjectSkillsDir), project)})
	}
	cs, ps := LoadCommands(cmdLayers...), LoadProfiles(skillLayers...)
	cs.Warnings = append(warns, cs.Warnings...)
	return cs, ps
}
