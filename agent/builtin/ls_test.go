package builtin

import (
	"fmt"
	"strings"
	"testing"
)

func TestLs(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{
		"b.txt": "", "a/x.go": "", "a/sub/y.go": "", ".git/HEAD": "ref", ".env": "SECRET=1",
	})
	l := tool(t, env, "ls")
	if got := mustCall(t, l, `{}`); got != ".env\n.git/\na/\nb.txt" {
		t.Errorf("ls = %q", got)
	}
	if got := mustCall(t, l, map[string]any{"path": "a"}); got != "sub/\nx.go" {
		t.Errorf("ls a = %q", got)
	}
	g.hidden[".env"] = true
	got := mustCall(t, l, map[string]any{"recursive": true})
	if got != ".git/\na/\na/sub/\na/sub/y.go\na/x.go\nb.txt" {
		t.Errorf("recursive ls = %q", got)
	}
	if got := mustCall(t, l, map[string]any{"path": "b.txt"}); !strings.Contains(got, "is a file") {
		t.Errorf("ls of a file = %q", got)
	}
	wantErr(t, l, map[string]any{"path": "missing"}, "ls")
	wantErr(t, l, map[string]any{"path": "/"}, "outside the workspace")
}

func TestLsTruncates(t *testing.T) {
	env, _ := testEnv(t)
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d", i)] = ""
	}
	writeTree(t, env.Workdir, files)
	got := mustCall(t, tool(t, env, "ls"), map[string]any{"max_entries": 10})
	lines := strings.Split(got, "\n")
	if lines[0] != "f00" || lines[9] != "f09" || !strings.Contains(got, "stopped at 10 entries") {
		t.Errorf("truncated ls = %q", got)
	}
	if got := mustCall(t, tool(t, env, "ls"), `{}`); strings.Contains(got, "stopped") || strings.Count(got, "\n") != 29 {
		t.Errorf("default ls of 30 files = %q", got)
	}
}
