package builtin

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{
		"main.go": "", "README.md": "", "a/b.go": "", "a/b_test.go": "", "a/c/d.go": "", "a/c/e.ts": "", "a/c/f.tsx": "",
		".git/config.go": "", "vendor/x.go": "", "secret.go": "",
	})
	g.hidden["secret.go"] = true
	gl := tool(t, env, "glob")
	cases := []struct{ pattern, path, want string }{
		{"**/*.go", "", "a/b.go\na/b_test.go\na/c/d.go\nmain.go\nvendor/x.go"},
		{"*.go", "", "main.go"},
		{"a/**/*.go", "", "a/b.go\na/b_test.go\na/c/d.go"},
		{"**/*_test.go", "", "a/b_test.go"},
		{"**/*.{ts,tsx}", "", "a/c/e.ts\na/c/f.tsx"},
		{"*/c/*", "", "a/c/d.go\na/c/e.ts\na/c/f.tsx"},
		{"**/*.go", "a", "b.go\nb_test.go\nc/d.go"},
		{"c/[de].*", "a", "c/d.go\nc/e.ts"},
		{filepath.ToSlash(filepath.Join(env.Workdir, "a", "c", "*.go")), "", "d.go"},
	}
	for _, c := range cases {
		args := map[string]any{"pattern": c.pattern}
		if c.path != "" {
			args["path"] = c.path
		}
		if got := mustCall(t, gl, args); got != c.want {
			t.Errorf("glob(%q in %q) = %q, want %q", c.pattern, c.path, got, c.want)
		}
	}
	if got := mustCall(t, gl, map[string]any{"pattern": "*.rs"}); !strings.Contains(got, "no files match") {
		t.Errorf("no match = %q", got)
	}
	wantErr(t, gl, map[string]any{"pattern": "[a"}, "invalid pattern")
	wantErr(t, gl, map[string]any{"pattern": "{a"}, "unclosed")
	wantErr(t, gl, map[string]any{"pattern": "*.go", "path": "main.go"}, "not a directory")
}

func TestGlobCapsResults(t *testing.T) {
	env, _ := testEnv(t)
	files := map[string]string{}
	for i := range globMaxResults + 5 {
		files[fmt.Sprintf("d/%d/f%04d", i%7, i)] = ""
	}
	writeTree(t, env.Workdir, files)
	got := mustCall(t, tool(t, env, "glob"), map[string]any{"pattern": "**/*"})
	if n := strings.Count(got, "\n") - 1; n != globMaxResults || !strings.Contains(got, "stopped at 1000 files") {
		t.Errorf("got %d lines, tail %q", n, got[len(got)-80:])
	}
}

func TestGlobPatternMatching(t *testing.T) {
	cases := []struct {
		pattern, path string
		match         bool
	}{
		{"**", "a/b/c", true},
		{"**/x", "x", true},
		{"**/x", "a/b/x", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**", "a/z", true},
		{"*.go", "a/b.go", false},
		{"**/**/*.go", "b.go", true},
		{"./src/*.go", "src/a.go", true},
		{"{a,b/{c,d}}/*.go", "b/d/x.go", true},
		{"{a,b/{c,d}}/*.go", "b/e/x.go", false},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", c.pattern, err)
		}
		if got := g.match(c.path); got != c.match {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.path, got, c.match)
		}
	}
	g, _ := compileGlob("src/**/*.go")
	if !g.mayContain("src") || !g.mayContain("src/a/b") || g.mayContain("docs") {
		t.Error("mayContain prunes wrongly")
	}
	if _, err := compileGlob(strings.Repeat("{a,b}", 10)); err == nil {
		t.Error("brace explosion accepted")
	}
}

// FuzzGlobPattern checks that no pattern panics or hangs, and that a literal
// path always matches itself.
func FuzzGlobPattern(f *testing.F) {
	for _, s := range []string{"**/*.go", "a/**/b/**/c", "{a,b}/[c-d]?", "[", "{", "}", "**", "a\\*b", "/abs/*"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 200 || len(path) > 200 {
			return
		}
		g, err := compileGlob(pattern)
		if err == nil {
			g.match(path)
			g.mayContain(path)
		}
		lit := strings.Trim(path, "/")
		if lit == "" || strings.ContainsAny(path, "*?[]{}\\,") || strings.Contains(path, "//") {
			return
		}
		for _, seg := range strings.Split(lit, "/") {
			if seg == "." || seg == ".." {
				return
			}
		}
		lg, err := compileGlob(lit)
		if err != nil {
			t.Fatalf("literal %q rejected: %v", lit, err)
		}
		if !lg.match(lit) {
			t.Fatalf("literal %q does not match itself", lit)
		}
	})
}
