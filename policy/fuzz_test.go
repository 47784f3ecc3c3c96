package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzParseRule: parsing never panics, and a parsed rule prints to a form
// that parses back to the same rule.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"Bash", "bash(go test *)", "Bash(go test:*)", "Bash(rm -rf*)", "Bash=echo 'a' && b", "Edit(docs/**)",
		"Read(/etc/*)", "mcp__x__y", "write_file(a[b)", "Bash(:*)", "Edit(a\\*b)", "Bash(a)(b)", "x=y(z)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy: rule ") {
				t.Fatalf("error without the rule: %v", err)
			}
			return
		}
		again, err := ParseRule(r.String())
		if err != nil {
			t.Fatalf("%q printed as %q which does not parse: %v", s, r.String(), err)
		}
		if again.String() != r.String() {
			t.Fatalf("%q: %q reparsed as %q", s, r.String(), again.String())
		}
	})
}

// hasOperator reports, from the parser alone, whether a script contains an
// unquoted shell operator or compound construct.
func hasOperator(src string) (bool, bool) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return false, false
	}
	op := len(file.Stmts) > 1
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			op = op || n.Background || n.Negated || n.Coprocess || n.Disown
		case *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block, *syntax.IfClause, *syntax.WhileClause,
			*syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl, *syntax.CoprocClause:
			op = true
		}
		return true
	})
	return op, true
}

// FuzzShellPrefixGrant: a command containing an unquoted shell operator (per
// the parser) is never allowed by a prefix grant alone. It may still be
// allowed as read-only, which is the fallback, not the grant.
func FuzzShellPrefixGrant(f *testing.F) {
	for _, s := range []string{
		"go test ./...", "go test ./... && rm -rf x", "go test; git push", "go test | sh", "go test & rm x",
		"(go test)", "{ go test; }", "go test\nrm x", "! go test", "go test 'a;b'", "go test \"&&\"",
		"if go test; then rm x; fi", "go test |& sh", "go test || true", "timeout 5 go test && x",
		"go test \\; rm", "git status && git log", "f() { go test; }; f",
	} {
		f.Add(s)
	}
	p, err := New(Config{Mode: "deny", Allow: []string{"Bash(go test:*)"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if !utf8.ValidString(cmd) {
			return // JSON arguments cannot carry it; encoding would change the command
		}
		ev := p.Evaluate(Query{Tool: "bash", Args: bashArgs(cmd)})
		op, parsed := hasOperator(cmd)
		if !parsed && ev.Decision == Allow {
			t.Fatalf("%q does not parse but was allowed: %+v", cmd, ev)
		}
		if op && ev.Decision == Allow && ev.Rule != "" {
			t.Fatalf("%q contains an operator but the prefix grant allowed it: %+v", cmd, ev)
		}
		if ev.Decision == Allow && ev.Rule == "" && !ev.ReadOnly {
			t.Fatalf("%q allowed by the deny fallback: %+v", cmd, ev)
		}
	})
}

// FuzzWritePath: whatever path the model sends, an accepted write resolves
// inside the workspace.
func FuzzWritePath(f *testing.F) {
	base := f.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("../..", filepath.Join(ws, "sub", "up")); err != nil {
		f.Fatal(err)
	}
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Bash: "off"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a", "../out/x", "link/x", "sub/up/out", "sub/up/ws/a", "/etc/x", "./sub/../a", "link/../ws/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := c.WritePath(p)
		if err != nil {
			return
		}
		if !within(got, c.Root()) {
			t.Fatalf("WritePath(%q) = %q, outside %q", p, got, c.Root())
		}
	})
}
