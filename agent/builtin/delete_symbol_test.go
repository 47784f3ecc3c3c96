package builtin

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
)

const deleteSymbolSrc = `package demo

import (
	"fmt"
	"strings"
)

// Keep is used by main.
func Keep() string { return fmt.Sprint("keep") }

// Shout is only here to be deleted; it alone uses strings.
//
// It has a two-paragraph doc comment.
func Shout(s string) string {
	return strings.ToUpper(s)
}

// T is a type with methods.
type T struct{ n int }

// Inc adds one.
func (t *T) Inc() { t.n++ }

// Get reads n.
func (t T) Get() int { return t.n }

const (
	// A is the first.
	A = 1
	B = 2 // B is the second.
	C = 3
)

var x, y = 1, 2

func init() {}

func init() {}
`

// goEnv is an observed workspace holding demo.go (deleteSymbolSrc) as a Go
// module, read once so the tools may change it.
func goEnv(t *testing.T) (agent.ToolEnv, string) {
	t.Helper()
	env, _ := testEnv(t)
	env.Observed = agent.NewObserved()
	writeTree(t, env.Workdir, map[string]string{"go.mod": "module demo\n\ngo 1.22\n", "demo.go": deleteSymbolSrc})
	mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "demo.go", "limit": 1})
	return env, filepath.Join(env.Workdir, "demo.go")
}

func TestDeleteSymbolRemovesTheDeclarationWithItsDocAndDeadImports(t *testing.T) {
	env, p := goEnv(t)
	out := mustCall(t, tool(t, env, "delete_symbol"), map[string]any{"path": "demo.go", "symbol": "Shout"})
	for _, want := range []string{"deleted func Shout", "lines 11-16", `removed the imports only it used: strings`} {
		if !strings.Contains(out, want) {
			t.Errorf("result %q lacks %q", out, want)
		}
	}
	got := readString(t, p)
	for _, gone := range []string{"Shout", "two-paragraph", `"strings"`} {
		if strings.Contains(got, gone) {
			t.Errorf("%q is still in the file:\n%s", gone, got)
		}
	}
	if !strings.Contains(got, "import (\n\t\"fmt\"\n)") && !strings.Contains(got, "import \"fmt\"") {
		t.Errorf("fmt import lost:\n%s", got)
	}
	if !strings.Contains(got, "// Keep is used by main.\nfunc Keep()") {
		t.Errorf("neighbour changed:\n%s", got)
	}
}

func TestDeleteSymbolFindsMethodsSpecsAndTypes(t *testing.T) {
	cases := []struct {
		symbol, what string
		gone, kept   []string
	}{
		{"T.Inc", "method T.Inc", []string{"Inc", "adds one"}, []string{"func (t T) Get()", "type T struct"}},
		{"(*T).Inc", "method T.Inc", []string{"Inc"}, []string{"Get"}},
		{"T.Get", "method T.Get", []string{"Get() int", "reads n"}, []string{"Inc"}},
		{"B", "const B", []string{"B = 2", "second"}, []string{"A = 1", "the first", "C = 3"}},
		{"A", "const A", []string{"A = 1", "the first"}, []string{"B = 2", "C = 3"}},
		{"T", "type T", []string{"type T", "with methods"}, []string{"func (t *T) Inc()"}},
	}
	for _, c := range cases {
		t.Run(c.symbol, func(t *testing.T) {
			env, p := goEnv(t)
			out := mustCall(t, tool(t, env, "delete_symbol"), map[string]any{"path": "demo.go", "symbol": c.symbol})
			if !strings.Contains(out, "deleted "+c.what) {
				t.Errorf("result %q does not name %q", out, c.what)
			}
			got := readString(t, p)
			for _, s := range c.gone {
				if strings.Contains(got, s) {
					t.Errorf("%q is still there:\n%s", s, got)
				}
			}
			for _, s := range c.kept {
				if !strings.Contains(got, s) {
					t.Errorf("%q was removed too:\n%s", s, got)
				}
			}
		})
	}
}

func TestDeleteSymbolRefusesWhatItCannotDoCleanly(t *testing.T) {
	env, p := goEnv(t)
	del := tool(t, env, "delete_symbol")
	wantErr(t, del, map[string]any{"path": "demo.go", "symbol": "Missing"}, "no top-level declaration named Missing")
	wantErr(t, del, map[string]any{"path": "demo.go", "symbol": "init"}, "2 declarations are named init", "delete_range")
	wantErr(t, del, map[string]any{"path": "demo.go", "symbol": "x"}, "declared together with other names")
	wantErr(t, del, map[string]any{"path": "demo.go", "symbol": "Keep.Inc"}, "no top-level declaration")
	writeTree(t, env.Workdir, map[string]string{"broken.go": "package demo\nfunc (\n", "a.py": "def f(): pass\n"})
	mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "broken.go"})
	wantErr(t, del, map[string]any{"path": "broken.go", "symbol": "f"}, "not valid Go")
	wantErr(t, del, map[string]any{"path": "a.py", "symbol": "f"}, "not a Go file")
	if got := readString(t, p); got != deleteSymbolSrc {
		t.Errorf("a refused call changed demo.go:\n%s", got)
	}
}

// TestDeleteSymbolNeedsAReadOfTheCurrentVersion: like edit_file, the
// deletion is refused until the run has read the file's current version.
func TestDeleteSymbolNeedsAReadOfTheCurrentVersion(t *testing.T) {
	env, p := goEnv(t)
	for _, name := range []string{"delete_symbol", "delete_range"} {
		if err := os.WriteFile(p, []byte(deleteSymbolSrc+"\nfunc Z() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"path": "demo.go", "symbol": "Z"}
		if name == "delete_range" {
			args = map[string]any{"path": "demo.go", "start_line": 1, "end_line": 1}
		}
		wantErr(t, tool(t, env, name), args, "changed on disk since this task last read it")
		mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "demo.go", "offset": 3, "limit": 1})
		mustCall(t, tool(t, env, name), args)
	}
	fresh, _ := testEnv(t)
	fresh.Observed = agent.NewObserved()
	writeTree(t, fresh.Workdir, map[string]string{"b.go": "package b\n\nfunc F() {}\n"})
	wantErr(t, tool(t, fresh, "delete_symbol"), map[string]any{"path": "b.go", "symbol": "F"}, "has not been read in this task")
	wantErr(t, tool(t, fresh, "delete_range"), map[string]any{"path": "b.go", "start_line": 1, "end_line": 1}, "has not been read in this task")
}

// TestDeleteSymbolKeepsTheModuleBuilding deletes declarations one after
// another from a real module and builds it with the go command each time.
func TestDeleteSymbolKeepsTheModuleBuilding(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	env, p := goEnv(t)
	writeTree(t, env.Workdir, map[string]string{"main/main.go": "package main\n\nimport \"demo\"\n\nfunc main() { println(demo.Keep()) }\n"})
	build := func(when string) {
		t.Helper()
		cmd := exec.Command(goBin, "build", "./...")
		cmd.Dir = env.Workdir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s\n%s", when, err, out, readString(t, p))
		}
	}
	build("before")
	for _, sym := range []string{"Shout", "T.Inc", "B", "T.Get", "T", "Keep"} {
		if sym == "Keep" {
			writeTree(t, env.Workdir, map[string]string{"main/main.go": "package main\n\nfunc main() {}\n"})
		}
		mustCall(t, tool(t, env, "delete_symbol"), map[string]any{"path": "demo.go", "symbol": sym})
		build("after deleting " + sym)
	}
	if got := readString(t, p); strings.Contains(got, "import") {
		t.Errorf("imports left after their last user went:\n%s", got)
	}
}

func TestDeleteRangeRemovesWholeLines(t *testing.T) {
	env, p := observedEnv(t) // a.txt is "one\ntwo\n"
	if err := os.WriteFile(p, []byte("1\n2\n3\n4"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "a.txt"})
	del := tool(t, env, "delete_range")
	wantErr(t, del, map[string]any{"path": "a.txt", "start_line": 3, "end_line": 9}, "has 4 lines", "past its end")
	wantErr(t, del, map[string]any{"path": "a.txt", "start_line": 3, "end_line": 2}, "start_line <= end_line")
	out := mustCall(t, del, map[string]any{"path": "a.txt", "start_line": 2, "end_line": 3})
	if !strings.Contains(out, "deleted 2 lines (lines 2-3)") || !strings.Contains(out, "now has 2 lines") {
		t.Errorf("result = %q", out)
	}
	if got := readString(t, p); got != "1\n4" {
		t.Fatalf("a.txt = %q", got)
	}
	mustCall(t, del, map[string]any{"path": "a.txt", "start_line": 2, "end_line": 2})
	if got := readString(t, p); got != "1\n" {
		t.Fatalf("a.txt = %q after deleting the unterminated last line", got)
	}
}

// FuzzRemoveGoDecl: whatever the source and the symbol, removeGoDecl does
// not panic, and what it returns is Go that parses.
func FuzzRemoveGoDecl(f *testing.F) {
	for _, s := range []string{deleteSymbolSrc, "package p\nfunc F() {}\n", "package p\nimport \"C\"\nfunc F() { C.x() }\n",
		"package p\n/* a */ func F() {} /* b */ var V = 1\n", "package p\nfunc (*T[K, V]) M() {}\n", "package p\nvar (\n// d\nV = 1 // c\n)\n",
		"package p\nimport (\n\t. \"fmt\"\n\t_ \"os\"\n\ts \"strings\"\n)\nfunc F() { s.ToUpper(\"\") }\n", "package p\r\nfunc F() {}\r\n", "func F("} {
		f.Add(s, "F")
	}
	f.Add(deleteSymbolSrc, "T.Inc")
	f.Add(deleteSymbolSrc, "V")
	f.Fuzz(func(t *testing.T, src, symbol string) {
		out, _, err := removeGoDecl([]byte(src), symbol)
		if err != nil {
			return
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "", out.src, parser.SkipObjectResolution); err != nil {
			t.Fatalf("removing %q left invalid Go: %v\n%s", symbol, err, out.src)
		}
	})
}
