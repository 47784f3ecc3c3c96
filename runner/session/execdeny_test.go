package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/config"
)

// The session hands its Bash deny rules to the sandbox, which refuses a
// denied program at exec however it was reached (here a copy of rm run
// by the bash tool directly, past the gate), and the tool's result names
// the rule.
func TestSessionDeniesAtExec(t *testing.T) {
	set := config.Default()
	set.Permissions.Deny = []string{"Bash(rm:*)"}
	var workdir string
	s := newSession(t, set, func(c *Config) { workdir = c.Workdir })
	if !s.Confinement.Supervised() {
		t.Skipf("the sandbox's seccomp supervisor does not work here (sandbox %q)", s.Confinement.SandboxKind())
	}
	rm, err := exec.LookPath("rm")
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(workdir, "victim")
	if err := os.WriteFile(victim, []byte("v"), 0o644); err != nil {
		t.Fatal(err)
	}
	bash, ok := s.Agent.Tools.Get("bash")
	if !ok {
		t.Fatal("no bash tool")
	}
	args, _ := json.Marshal(map[string]string{"command": "cp " + rm + " ./x && ./x victim"})
	out, err := bash.Execute(t.Context(), args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the copy of rm deleted the file: %q", out)
	}
	if !strings.Contains(out, "refused by deny rule Bash(rm:*) at exec") {
		t.Errorf("result = %q, want it to name the rule", out)
	}
}
