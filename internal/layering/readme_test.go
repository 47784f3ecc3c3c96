package layering

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadmeNamesEveryTopLevelPackage keeps the README's layout paragraph
// true: a newcomer reads the architecture there before the folders.
func TestReadmeNamesEveryTopLevelPackage(t *testing.T) {
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, name := range []string{"README.md", "README.zh-CN.md"} {
		readme, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for pkg := range strings.FieldsSeq(string(out)) {
			top, _, _ := strings.Cut(strings.TrimPrefix(pkg, module+"/"), "/")
			if top == module || named[top] {
				continue
			}
			named[top] = true
			if !strings.Contains(string(readme), "`"+top+"`") {
				t.Errorf("%s's layout paragraph does not name the top-level package %s", name, top)
			}
		}
	}
}
