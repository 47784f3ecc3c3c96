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

// TestSpecContentsFollowTheSections keeps the SPEC's table of contents
// and its numbered sections in step, and the numbers in order.
func TestSpecContentsFollowTheSections(t *testing.T) {
	spec, err := os.ReadFile("../../docs/SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	var contents, headings []string
	inContents := false
	for line := range strings.SplitSeq(string(spec), "\n") {
		switch {
		case line == "## Contents":
			inContents = true
		case inContents && strings.HasPrefix(line, "## "):
			inContents = false
		case inContents && strings.Contains(line, "- ["):
			title, _, _ := strings.Cut(line[strings.Index(line, "[")+1:], "](")
			contents = append(contents, title)
		}
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "##") && h != "Contents" {
			if h[0] >= '0' && h[0] <= '9' || strings.HasPrefix(line, "#### ") {
				headings = append(headings, strings.ReplaceAll(h, "`", ""))
			}
		}
	}
	if strings.Join(contents, "\n") != strings.Join(headings, "\n") {
		t.Errorf("the SPEC's contents list\n%s\ndoes not match its numbered sections\n%s", strings.Join(contents, "\n"), strings.Join(headings, "\n"))
	}
}
