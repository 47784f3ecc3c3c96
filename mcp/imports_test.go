package mcp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps mcp on its side of the package map: of this
// module it may use only agent and internal/*.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "reasonix/mcp").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "reasonix/mcp" || !strings.HasPrefix(pkg, "reasonix/") {
			continue
		}
		if pkg != "reasonix/agent" && !strings.HasPrefix(pkg, "reasonix/internal/") {
			t.Errorf("mcp depends on %s; it may import only reasonix/agent and reasonix/internal/*", pkg)
		}
	}
}
