package goals

import (
	"slices"
	"testing"

	"reasonix/agent"
	"reasonix/internal/testenv"
	"reasonix/policy"
)

func TestClaimedShell(t *testing.T) {
	ws := t.TempDir()
	off, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	claimed := ChildSpec{Writer: true, WritePaths: []string{"pkg"}}
	all := []string{"bash", "read_file", "write_file"}

	if sh, names := ClaimedShell(off, ChildSpec{Writer: true}, nil, all); sh != nil || !slices.Equal(names, all) {
		t.Errorf("a child without a claim changed: %v %v", sh, names)
	}
	if _, names := ClaimedShell(off, claimed, nil, all); slices.Contains(names, "bash") || !slices.Contains(names, "write_file") {
		t.Errorf("bash kept for a claimed child without a sandbox: %v", names)
	}
	if _, names := ClaimedShell(nil, claimed, nil, nil); slices.Contains(names, "bash") || len(names) == 0 {
		t.Errorf("without a confinement: %v", names)
	}
	testenv.LookPath(t, testenv.Bwrap)
	enforce, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	sh, names := ClaimedShell(enforce, claimed, enforce.Shell(), all)
	if sh == nil || sh == enforce.Shell() || !slices.Equal(names, all) {
		t.Errorf("a sandboxed claimed child did not get a bound shell: %v %v", sh, names)
	}
	var _ agent.ShellWrapper = sh
}
