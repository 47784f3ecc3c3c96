package policy

import (
	"slices"
	"testing"
)

var execRules = Config{Mode: "allow", Deny: []string{
	"Bash(rm:*)", "Bash(git push:*)", "Bash=curl -X DELETE http://x", "Bash(npm run build)", "Read(/etc/**)",
}}

func TestDeniedCommands(t *testing.T) {
	got := mustPolicy(t, execRules).DeniedCommands()
	want := []string{"curl", "find", "git", "mv", "npm", "rm", "rmdir", "shred", "unlink"}
	if !slices.Equal(got, want) {
		t.Errorf("DeniedCommands() = %q, want %q", got, want)
	}
	if got := mustPolicy(t, Config{Deny: []string{"Bash(/usr/bin/make:*)"}}).DeniedCommands(); !slices.Equal(got, []string{"make"}) {
		t.Errorf("a rule naming a path: %q", got)
	}
	if got := mustPolicy(t, Config{Deny: []string{"Edit(x)"}}).DeniedCommands(); len(got) != 0 {
		t.Errorf("no Bash rule: %q", got)
	}
}
