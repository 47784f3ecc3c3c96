package layering

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A test that sleeps a fixed time either waits too long on a fast machine or
// too little on a loaded one (the suite runs with -race on small shared
// boxes), so a test waits on the event itself: a channel the code closes or a
// test signal the loop sends, internal/eventually for what is only observable
// from outside, or testing/synctest where a clock is what is waited on. A
// time.Sleep inside a synctest bubble (lexically inside the function given to
// synctest.Test) advances the bubble's fake clock and waits for nothing, so
// it is not reported.
//
// sleepAllowed lists the sleeps that stay, keyed by file and enclosing
// function (a method as Type.Method), each with the reason it is not a wait.
// A listed function may hold several sleeps. An entry whose sleep is gone
// fails the test too, so the list never outlives its reasons.
var sleepAllowed = []struct{ file, fn, reason string }{
	// Time passing is what these measure.
	{"runner/node_bench_test.go", "BenchmarkIdleNode", "an idle node's CPU is measured over a wall-clock window (and after a settling period): the window is the subject"},
	{"cmd/reasonix/nodes_bench_test.go", "runNodes", "a deliberately rare poll in a benchmark: each look costs API and database CPU that the benchmark counts against the tasks, and the rate comes from finished_at, not from the poll"},

	{"bot/relay/bench_test.go", "BenchmarkRelayBurst", "the benchmark paces its events at a fixed rate: the pacing is the load being measured"},
	{"bot/relay/bench_test.go", "BenchmarkRelayEventToEdit", "the benchmark paces its events at a fixed rate: the pacing is the load being measured"},

	// Waiting for nothing to happen.
	{"bot/slack/queue_test.go", "TestFullQueueWaitsBeforeAcknowledging", "asserts an acknowledgement does not happen while the queue is full; the transport has no signal for a decision it never makes, so the test gives it 200 ms to go wrong"},
}

// sleepSite is one time.Sleep found in a test file.
type sleepSite struct {
	file string // slash-separated, relative to the module root
	line int
	fn   string // enclosing top-level function, Type.Method for a method
}

func TestNoFixedSleepsInTests(t *testing.T) {
	root := moduleRoot(t)
	var sites []sleepSite
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module (deploy/k8s/verify)
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		found, err := findSleeps(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		sites = append(sites, found...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d test files: the walk missed the module, and the check would pass vacuously", files)
	}
	used := map[string]bool{}
	for _, s := range sites {
		key := s.file + " " + s.fn
		i := slices.IndexFunc(sleepAllowed, func(a struct{ file, fn, reason string }) bool { return a.file == s.file && a.fn == s.fn })
		if i >= 0 {
			used[key] = true
			continue
		}
		t.Errorf("%s:%d: a fixed time.Sleep in %s", s.file, s.line, s.fn)
	}
	if t.Failed() {
		t.Log("Wait on the event instead: a channel the code closes or a test signal its loop sends; " +
			"internal/eventually to poll what is only observable from outside; testing/synctest (synctest.Test) where a clock is waited on. " +
			"A sleep that is itself the subject goes in sleepAllowed (internal/layering/sleep_test.go) with its reason.")
	}
	for _, a := range sleepAllowed {
		if !used[a.file+" "+a.fn] {
			t.Errorf("sleepAllowed lists %s %s, which sleeps no more: remove the entry", a.file, a.fn)
		}
	}
}

// findSleeps returns the references to time.Sleep in the Go file src, named
// file, outside synctest bubbles. A reference that is not a call (sleep :=
// time.Sleep) counts too.
func findSleeps(file string, src []byte) ([]sleepSite, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	timeName, synctestName := "", ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch path {
		case "time":
			timeName = cmp.Or(name, "time")
		case "testing/synctest":
			synctestName = cmp.Or(name, "synctest")
		}
	}
	if timeName == "" || timeName == "_" {
		return nil, nil
	}
	var sites []sleepSite
	for _, decl := range f.Decls {
		fn := "(package level)"
		if fd, ok := decl.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				fn = recvName(fd.Recv.List[0].Type) + "." + fn
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && synctestName != "" && isSelector(call.Fun, synctestName, "Test", "Run") {
				return false // a bubble: its sleeps move a fake clock
			}
			if isSelector(n, timeName, "Sleep") {
				sites = append(sites, sleepSite{file: file, line: fset.Position(n.Pos()).Line, fn: fn})
			}
			return true
		})
	}
	return sites, nil
}

// isSelector reports whether n is pkg.Name for one of names, pkg being an
// imported package's name.
func isSelector(n ast.Node, pkg string, names ...string) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && slices.Contains(names, sel.Sel.Name)
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr: // a generic receiver T[P]
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return fmt.Sprintf("%T", e)
}

// moduleRoot is the directory of the go.mod above this package.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func TestFindSleeps(t *testing.T) {
	src := `package x

import (
	"testing"
	"testing/synctest"
	tm "time"
)

func TestA(t *testing.T) {
	go func() { tm.Sleep(1) }()
}

func (h *helper) wait() { tm.Sleep(2) }

var nap = tm.Sleep

func TestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { tm.Sleep(3) })
	tm.Sleep(4)
}
`
	got, err := findSleeps("x_test.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []sleepSite{
		{"x_test.go", 10, "TestA"},
		{"x_test.go", 13, "helper.wait"},
		{"x_test.go", 15, "(package level)"},
		{"x_test.go", 19, "TestBubble"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("findSleeps = %+v\nwant %+v", got, want)
	}
	if got, _ := findSleeps("y_test.go", []byte("package y\n\nfunc Sleep() {}\n\nfunc f() { Sleep() }\n")); len(got) != 0 {
		t.Errorf("a file without the time package: %+v", got)
	}
}
