package session

import (
	"context"

	"reasonix/agent/recipe"
)

// CheckoutInstructions loads the instruction files a run on a person's own
// checkout follows: the user's under home (the Reasonix home) and the
// checkout root's. The service never uses it for a task: a task's come from
// its base commit (runner), never from its worktree.
func CheckoutInstructions(home, workdir string) recipe.Instructions {
	var layers []recipe.Layer
	if home != "" {
		layers = append(layers, recipe.Layer{Scope: recipe.ScopeUser, Files: recipe.ReadInstructionFiles(home, "")})
	}
	layers = append(layers, recipe.Layer{Scope: recipe.ScopeProject, Files: recipe.ReadInstructionFiles(workdir, "")})
	return recipe.LoadInstructions(0, layers...)
}

// CheckoutDirInstructions reads directories' instruction files from a
// person's own checkout (see CheckoutInstructions).
func CheckoutDirInstructions(workdir string) DirInstructions {
	return func(_ context.Context, dirs []string) ([]recipe.File, error) {
		return recipe.ReadInstructionFiles(workdir, dirs...), nil
	}
}
