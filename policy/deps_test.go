package policy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps policy on the vocabulary side of the graph: it
// may import agent (vocabulary only) and internal/*, nothing else of ours.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "reasonix/policy").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if !strings.HasPrefix(dep, "reasonix/") || dep == "reasonix/policy" || dep == "reasonix/agent" || strings.HasPrefix(dep, "reasonix/internal/") {
			continue
		}
		t.Errorf("policy depends on %s", dep)
	}
}
