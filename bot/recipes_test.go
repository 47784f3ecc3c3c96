package bot

import (
	"strings"
	"testing"

	"reasonix/agent/recipe"
)

func TestCommandOf(t *testing.T) {
	cases := []struct {
		in, name, args string
		ok             bool
	}{
		{"/review pkg/foo", "review", "pkg/foo", true},
		{"/review@reasonix_bot pkg/foo", "review", "pkg/foo", true},
		{"/git:commit", "git:commit", "", true},
		{"/tmp/x is broken", "", "", false},
		{"fix /review", "", "", false},
		{"/review\tpkg/foo\nmore", "review", "pkg/foo\nmore", true},
	}
	for _, c := range cases {
		name, args, ok := CommandOf(c.in)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("CommandOf(%q) = %q %q %v", c.in, name, args, ok)
		}
	}
	// ParseCommand leaves a command in the task text for the relay.
	if c := ParseCommand("in:w /review x"); c.Verb != VerbTask || c.Text != "/review x" || c.Workspace != "w" {
		t.Errorf("ParseCommand = %+v", c)
	}
}

func TestCommandsHelp(t *testing.T) {
	cs := recipe.LoadCommands(recipe.Layer{Scope: recipe.ScopeProject, Files: []recipe.File{
		{Path: "review.md", Data: []byte("---\ndescription: Review\nargument-hint: [pkg]\n---\nx")},
		{Path: "git/commit.md", Data: []byte("y")},
	}})
	got := CommandsHelp(cs)
	if !strings.Contains(got, "/review [pkg] — Review") || !strings.Contains(got, "/git:commit") {
		t.Fatalf("help = %q", got)
	}
	if CommandsHelp(recipe.LoadCommands()) != "" {
		t.Fatal("no commands, no section")
	}
}
