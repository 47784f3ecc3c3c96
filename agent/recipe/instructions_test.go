package recipe_test

import (
	"slices"
	"strings"
	"testing"

	"reasonix/agent/recipe"
)

func TestInstructionDirs(t *testing.T) {
	for in, want := range map[string][]string{
		"a/b/c.go": {"a", "a/b"},
		"./a/x.go": {"a"},
		"main.go":  nil,
		"../x":     nil,
		"/etc/x":   nil,
		"a/../b/y": {"b"},
	} {
		if got := recipe.InstructionDirs(in); !slices.Equal(got, want) {
			t.Errorf("InstructionDirs(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each directory contributes REASONIX.md and AGENTS.md; its CLAUDE.md only
// when neither could be read. The user's file comes first, then the
// repository's outermost first, and the same files in another order give
// the same bytes.
func TestLoadInstructionsChoosesAndOrders(t *testing.T) {
	user := recipe.Layer{Scope: recipe.ScopeUser, Files: []recipe.File{{Path: "AGENTS.md", Data: []byte("user rule")}}}
	project := []recipe.File{
		{Path: "AGENTS.md", Data: []byte("agents rule")},
		{Path: "REASONIX.md", Data: []byte("reasonix rule")},
		{Path: "CLAUDE.md", Data: []byte("claude rule, not wanted here")},
		{Path: "pkg/AGENTS.md", Refused: "a symbolic link is not followed"},
		{Path: "pkg/CLAUDE.md", Data: []byte("pkg claude rule")},
	}
	got := recipe.LoadInstructions(0, user, recipe.Layer{Scope: recipe.ScopeProject, Files: project})
	var order []string
	for _, s := range []string{"user rule", "reasonix rule", "agents rule", "pkg claude rule"} {
		i := strings.Index(got.Text, s)
		if i < 0 {
			t.Fatalf("text lacks %q:\n%s", s, got.Text)
		}
		order = append(order, s)
		_ = i
	}
	if !(strings.Index(got.Text, "user rule") < strings.Index(got.Text, "reasonix rule") &&
		strings.Index(got.Text, "reasonix rule") < strings.Index(got.Text, "agents rule") &&
		strings.Index(got.Text, "agents rule") < strings.Index(got.Text, "pkg claude rule")) {
		t.Fatalf("order wrong:\n%s", got.Text)
	}
	if strings.Contains(got.Text, "not wanted") {
		t.Fatalf("root CLAUDE.md used beside AGENTS.md:\n%s", got.Text)
	}
	if !strings.Contains(got.Text, `source="user:AGENTS.md"`) || !strings.Contains(got.Text, `source="pkg/CLAUDE.md"`) {
		t.Fatalf("sources missing:\n%s", got.Text)
	}
	var skipped []string
	for _, f := range got.Files {
		if f.Skipped != "" {
			skipped = append(skipped, f.Path)
		}
	}
	if !slices.Equal(skipped, []string{"pkg/AGENTS.md"}) {
		t.Fatalf("skipped = %q (files %+v)", skipped, got.Files)
	}
	slices.Reverse(project[:3])
	again := recipe.LoadInstructions(0, user, recipe.Layer{Scope: recipe.ScopeProject, Files: project})
	if again.Text != got.Text {
		t.Fatalf("text depends on the order files arrived in")
	}
}

func TestLoadInstructionsBound(t *testing.T) {
	big := strings.Repeat("é", 600) // 1,200 bytes
	got := recipe.LoadInstructions(1001, recipe.Layer{Scope: recipe.ScopeProject, Files: []recipe.File{
		{Path: "AGENTS.md", Data: []byte(big)},
		{Path: "a/AGENTS.md", Data: []byte("later")},
	}})
	if !got.Files[0].Truncated || got.Files[1].Skipped == "" || strings.Contains(got.Text, "later") {
		t.Fatalf("files = %+v", got.Files)
	}
	if !strings.Contains(got.Text, strings.Repeat("é", 500)+"\n[cut") {
		t.Fatalf("not cut on a character boundary at the bound")
	}
	if none := recipe.LoadInstructions(0); none.Text != "" || len(none.Files) != 0 {
		t.Fatalf("no files gave %+v", none)
	}
}
