package recipe

import (
	"reflect"
	"slices"
	"testing"
)

// TestProfileHasOnlyCeilingFields fails when Profile grows a field: a new
// one must be a ceiling (it can only narrow a child), never a per-call
// value such as write_paths or max_turns, and this list is where that
// decision is recorded (seed §3.10).
func TestProfileHasOnlyCeilingFields(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[Profile]()
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Name)
	}
	// Effort, like Model, is a preference the seed ranks (§3.10), not a grant.
	want := []string{"Name", "Description", "SystemPrompt", "AllowedTools", "ReadOnly", "Model", "Effort", "Scope"}
	if !slices.Equal(names, want) {
		t.Fatalf("Profile fields = %v, want %v: a profile describes a worker, not a run", names, want)
	}
}

func TestProfileFromSkillNarrowsOnly(t *testing.T) {
	sk := Skill{Name: "review", Scope: ScopeProject, Body: "You review.", Meta: map[string]string{
		"runas": "subagent", "description": "Reviewer", "allowed-tools": "[read_file, grep]",
		"read-only": "yes", "model": "m-pro",
		// Per-call and routing values a file might try to set: none may pass.
		"write_paths": "/", "max_turns": "999", "posture": "yolo", "allow": "bash",
	}}
	p, ok := ProfileFromSkill(sk)
	if !ok {
		t.Fatal("a runAs: subagent skill is a profile")
	}
	if p.SystemPrompt != "You review." || !p.ReadOnly || p.Model != "m-pro" || !slices.Equal(p.AllowedTools, []string{"read_file", "grep"}) {
		t.Fatalf("profile = %+v", p)
	}
	if p.Allows("bash") || !p.Allows("grep") {
		t.Fatal("allowed-tools is not a ceiling")
	}
	empty, _ := ProfileFromSkill(Skill{Name: "x", Meta: map[string]string{"runas": "subagent", "allowed-tools": ""}})
	if empty.Allows("read_file") {
		t.Fatal("an empty allowed-tools must allow nothing")
	}
	open, _ := ProfileFromSkill(Skill{Name: "x", Meta: map[string]string{"runas": "subagent", "read-only": "false"}})
	if open.ReadOnly || !open.Allows("bash") {
		t.Fatalf("no ceiling set: %+v", open)
	}
	if _, ok := ProfileFromSkill(Skill{Name: "x", Meta: map[string]string{"description": "plain skill"}}); ok {
		t.Fatal("a skill without runAs: subagent is not a profile")
	}
}

func TestLoadProfiles(t *testing.T) {
	user := Layer{ScopeUser, files(
		"review/SKILL.md", "---\nrunAs: subagent\n---\nuser reviewer",
		"helper/SKILL.md", "---\ndescription: not a profile\n---\nhelp",
	)}
	project := Layer{ScopeProject, files(
		"review/SKILL.md", "---\nrunAs: subagent\nread-only: true\n---\nproject reviewer",
		"review/references/x.md", "ignored",
		"broken/SKILL.md", "---\nrunAs subagent\n---\nx",
	)}
	ps := LoadProfiles(user, project)
	if got := ps.Names(); !slices.Equal(got, []string{"review"}) {
		t.Fatalf("names = %v", got)
	}
	p, _ := ps.Lookup("review")
	if p.SystemPrompt != "project reviewer" || !p.ReadOnly {
		t.Fatalf("review = %+v, want the project's", p)
	}
	if len(ps.Warnings) != 1 || ps.Warnings[0].Path != "broken/SKILL.md" {
		t.Fatalf("warnings = %v", ps.Warnings)
	}
}

func TestChildModelPrecedence(t *testing.T) {
	if got := ChildModel("cfg-profile", "call", "front", "default", "parent"); got != "cfg-profile" {
		t.Error(got)
	}
	if got := ChildModel("", "call", "front", "default", "parent"); got != "call" {
		t.Error(got)
	}
	if got := ChildModel("", "", "front", "default", "parent"); got != "front" {
		t.Error(got)
	}
	if got := ChildModel("", "", "", "default", "parent"); got != "default" {
		t.Error(got)
	}
	if got := ChildModel("", " ", "", "", "parent"); got != "parent" {
		t.Error(got)
	}
}
