package builtin

import (
	"fmt"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{
		"a.go":         "package a\nfunc Foo() {}\nfunc bar() {}\n",
		"b/c.go":       "package b\n// FOO here\n",
		"b/c.md":       "Foo in docs\n",
		"bin.dat":      "Foo\x00binary",
		".git/objects": "Foo\n",
		".env":         "Foo=secret\n",
	})
	g.hidden[".env"] = true
	gr := tool(t, env, "grep")
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "Foo"}, "a.go:2:func Foo() {}\nb/c.md:1:Foo in docs\n"},
		{map[string]any{"pattern": "foo", "case_insensitive": true}, "a.go:2:func Foo() {}\nb/c.go:2:// FOO here\nb/c.md:1:Foo in docs\n"},
		{map[string]any{"pattern": `^func \w+\(\)`, "glob": "*.go"}, "a.go:2:func Foo() {}\na.go:3:func bar() {}\n"},
		{map[string]any{"pattern": "package", "path": "b"}, "b/c.go:1:package b\n"},
		{map[string]any{"pattern": "package", "path": "b/c.go"}, "b/c.go:1:package b\n"},
		{map[string]any{"pattern": "o", "glob": "b/*.md"}, "b/c.md:1:Foo in docs\n"},
		{map[string]any{"pattern": "nothing-like-this"}, "no matches"},
	}
	for _, c := range cases {
		if got := mustCall(t, gr, c.args); got != c.want {
			t.Errorf("grep(%v) = %q, want %q", c.args, got, c.want)
		}
	}
	wantErr(t, gr, map[string]any{"pattern": "("}, "invalid regular expression", "RE2")
	wantErr(t, gr, map[string]any{"pattern": `(?<=a)b`}, "invalid regular expression")
	wantErr(t, gr, map[string]any{"pattern": "x", "glob": "["}, "glob")
	wantErr(t, gr, map[string]any{"pattern": "x", "path": ".env"}, "hidden by policy")
}

func TestGrepCapsResultsAndLongLines(t *testing.T) {
	env, _ := testEnv(t)
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	long := strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000)
	writeTree(t, env.Workdir, map[string]string{"many.txt": b.String(), "long.txt": long})
	gr := tool(t, env, "grep")
	got := mustCall(t, gr, map[string]any{"pattern": "^hit", "max_results": 5})
	if strings.Count(got, "many.txt:") != 5 || !strings.Contains(got, "stopped at 5 matching lines") {
		t.Errorf("capped grep = %q", got)
	}
	got = mustCall(t, gr, map[string]any{"pattern": "NEEDLE"})
	if !strings.Contains(got, "NEEDLE") || len(got) > grepShowLine+100 {
		t.Errorf("long line excerpt (%d bytes) = %q", len(got), got)
	}
}
