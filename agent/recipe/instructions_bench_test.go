package recipe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent/recipe"
)

// BenchmarkInstructionsStart is what a task's start spends on instruction
// files besides the (cached) base-commit read: the user's files read from
// the home, and both layers chosen and rendered.
func BenchmarkInstructionsStart(b *testing.B) {
	home := b.TempDir()
	if err := os.WriteFile(filepath.Join(home, "AGENTS.md"), []byte(strings.Repeat("user rule\n", 200)), 0o644); err != nil {
		b.Fatal(err)
	}
	project := []recipe.File{{Path: "AGENTS.md", Data: []byte(strings.Repeat("Run gofmt before every commit.\n", 300))}}
	for b.Loop() {
		ins := recipe.LoadInstructions(0,
			recipe.Layer{Scope: recipe.ScopeUser, Files: recipe.ReadInstructionFiles(home, "")},
			recipe.Layer{Scope: recipe.ScopeProject, Files: project})
		if ins.Text == "" {
			b.Fatal("no text")
		}
	}
}
