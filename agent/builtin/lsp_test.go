package builtin

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/internal/lsp"
	"reasonix/internal/testenv"
)

// sandboxStandIn stands in for the run's OS sandbox, which the policy
// package tests: it runs a script through bash, in a form the lsp tools
// take for a confining wrapper (a wrapper that hands back the bare
// `bash -c SCRIPT` confines nothing, and they refuse it).
type sandboxStandIn struct{}

func (sandboxStandIn) WrapShell(_, script string) ([]string, error) {
	return []string{"bash", "--norc", "-c", script}, nil
}

// plainShell is an unconfined wrapper, like the policy's when bash has no
// sandbox.
type plainShell struct{}

func (plainShell) WrapShell(_, script string) ([]string, error) {
	return []string{"bash", "-c", script}, nil
}

// needGopls skips, or fails where CI promises gopls, without it.
func needGopls(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gopls"); err != nil || !goplsFound {
		testenv.Missing(t, testenv.Gopls, "gopls is not on PATH")
	}
}

// TestLSPToolsExistOnlyWithAServer: without gopls on PATH the lsp tools
// are not registered at all; with it, all four are.
func TestLSPToolsExistOnlyWithAServer(t *testing.T) {
	names := agent.Builtins()
	for _, n := range []string{"lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics"} {
		if slices.Contains(names, n) != goplsFound {
			t.Errorf("%s registered = %v, gopls found = %v", n, !goplsFound, goplsFound)
		}
	}
}

func TestLSPRefusesToRunUnconfined(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"a.go": "package a\n\nfunc F() {}\n"})
	env.Jobs = agent.NewJobs()
	t.Cleanup(env.Jobs.Close)
	args := map[string]any{"path": "a.go", "line": 3, "symbol": "F"}
	for _, sh := range []agent.ShellWrapper{nil, plainShell{}} {
		env.Shell = sh
		wantErr(t, &lspDefinition{env: env}, args, "only inside the bash sandbox")
	}
	if ids := env.Jobs.IDs(); len(ids) != 0 {
		t.Errorf("a refused start left jobs %v", ids)
	}
}

func TestLSPPositions(t *testing.T) {
	text := "package a\n\nvar héllo, x = Size(1), x\n"
	cases := []struct {
		line   int
		symbol string
		column int
		want   lsp.Position
		err    string
	}{
		{3, "x", 0, lsp.Position{Line: 2, Character: 11}, ""}, // the whole word, not the x in nothing before it
		{3, "Size", 0, lsp.Position{Line: 2, Character: 15}, ""},
		{3, "", 17, lsp.Position{Line: 2, Character: 15}, ""}, // byte column 17 is after é's two bytes
		{3, "Nope", 0, lsp.Position{}, "does not occur on line 3"},
		{9, "x", 0, lsp.Position{}, "outside the file"},
		{3, "", 99, lsp.Position{}, "outside line 3"},
	}
	for _, c := range cases {
		got, err := lspPosition(text, c.line, c.symbol, c.column)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("lspPosition(%d, %q, %d) error = %v, want %q", c.line, c.symbol, c.column, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("lspPosition(%d, %q, %d) = %+v, %v; want %+v", c.line, c.symbol, c.column, got, err, c.want)
		}
	}
	if col := byteColumn("var héllo, x", 11); col != 13 {
		t.Errorf("byteColumn = %d, want 13", col)
	}
	if p := uriPath(fileURI("/tmp/a b/ç.go")); p != "/tmp/a b/ç.go" {
		t.Errorf("URI round trip = %q", p)
	}
}

// goplsEnv is a workspace holding a small Go module, with a run's jobs and
// the sandbox stand-in.
func goplsEnv(t *testing.T) agent.ToolEnv {
	t.Helper()
	needGopls(t)
	env, _ := testEnv(t)
	env.Shell = sandboxStandIn{}
	env.Jobs = agent.NewJobs()
	t.Cleanup(env.Jobs.Close)
	writeTree(t, env.Workdir, map[string]string{
		"go.mod":      "module example.com/demo\n\ngo 1.22\n",
		"calc/add.go": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n",
		"main.go":     "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/demo/calc\"\n)\n\nfunc main() {\n\tfmt.Println(calc.Add(1, 2))\n}\n",
	})
	return env
}

// TestLSPDefinitionAgainstGopls asks a real gopls where a name from
// another package is defined, what it is and where it is used.
func TestLSPDefinitionAgainstGopls(t *testing.T) {
	env := goplsEnv(t)
	out := mustCall(t, &lspDefinition{env: env}, map[string]any{"path": "main.go", "line": 10, "symbol": "Add"})
	if !strings.HasPrefix(out, "calc/add.go:4:6: func Add(a, b int) int") {
		t.Errorf("definition of calc.Add = %q", out)
	}
	out = mustCall(t, &lspHover{env: env}, map[string]any{"path": "main.go", "line": 10, "symbol": "Add"})
	if !strings.Contains(out, "Add(a int, b int) int") || !strings.Contains(out, "returns the sum") {
		t.Errorf("hover = %q", out)
	}
	out = mustCall(t, &lspReferences{env: env}, map[string]any{"path": "calc/add.go", "line": 4, "symbol": "Add"})
	if !strings.HasPrefix(out, "main.go:10:19: fmt.Println(calc.Add(1, 2))") || strings.Contains(out, "add.go") {
		t.Errorf("references = %q", out)
	}
	if ids := env.Jobs.IDs(); len(ids) != 1 {
		t.Errorf("one server for the run's calls, jobs = %v", ids)
	}
}

// TestLSPDiagnosticsFollowTheFile: a type error on disk is reported; once
// fixed, it is gone.
func TestLSPDiagnosticsFollowTheFile(t *testing.T) {
	env := goplsEnv(t)
	writeTree(t, env.Workdir, map[string]string{"calc/bad.go": "package calc\n\nfunc Bad() string { return Add(1, 2) }\n"})
	diag := &lspDiagnostics{env: env}
	out := mustCall(t, diag, map[string]any{"path": "calc/bad.go"})
	if !strings.Contains(out, "calc/bad.go:3:") || !strings.Contains(out, "error:") || !strings.Contains(out, "int") {
		t.Errorf("diagnostics of a type error = %q", out)
	}
	writeTree(t, env.Workdir, map[string]string{"calc/bad.go": "package calc\n\nfunc Bad() int { return Add(1, 2) }\n"})
	if out := mustCall(t, diag, map[string]any{"path": "calc/bad.go"}); out != "no diagnostics for calc/bad.go" {
		t.Errorf("after the fix = %q", out)
	}
}

// TestLSPServerEndsWithTheRun: closing the run's jobs stops gopls.
func TestLSPServerEndsWithTheRun(t *testing.T) {
	env := goplsEnv(t)
	mustCall(t, &lspHover{env: env}, map[string]any{"path": "main.go", "line": 10, "symbol": "Println"})
	s := lspRecorded(env.Jobs)
	if s == nil {
		t.Fatal("no server recorded for the run")
	}
	env.Jobs.Close()
	select {
	case <-s.exited:
	default:
		t.Fatal("gopls still runs after the run ended")
	}
	if lspRecorded(env.Jobs) != nil {
		t.Error("the ended run's server is still recorded")
	}
	_, err := call(t, &lspHover{env: env}, map[string]any{"path": "main.go", "line": 10, "symbol": "Println"})
	if err == nil {
		t.Error("a call after the run ended started a server")
	}
}
