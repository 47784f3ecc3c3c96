package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"reasonix/agent"
	"reasonix/internal/codeindex"
)

func init() {
	agent.RegisterBuiltin("delete_symbol", func(env agent.ToolEnv) agent.Tool { return &deleteSymbol{env: env} })
}

// deleteSymbol removes one top-level Go declaration by name, with its doc
// comment, drops the imports only it used and leaves the file gofmt-clean.
// It works on the syntax tree alone (no type checking): fast, and it never
// runs anything of the task's.
type deleteSymbol struct{ env agent.ToolEnv }

func (*deleteSymbol) Name() string { return "delete_symbol" }
func (*deleteSymbol) Description() string {
	return "Delete one top-level declaration from a Go file by name: a func, a method (\"Type.Method\"), a type, a var or a const, " +
		"with its doc comment; imports used only by it are removed and the file is gofmt-formatted. " +
		"Callers elsewhere are not changed: the result says how many references remain in the file. " +
		"Read the file first: a file not read since it last changed is refused. For other languages use delete_range."
}

func (*deleteSymbol) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Go file to change, relative to the workspace or absolute."},
    "symbol": {"type": "string", "description": "Name of the declaration: \"Func\", \"Type\", \"Var\", \"Const\", or \"Type.Method\" for a method (pointer receivers too)."}
  },
  "required": ["path", "symbol"],
  "additionalProperties": false
}`)
}

type deleteSymbolArgs struct {
	Path   string `json:"path"`
	Symbol string `json:"symbol"`
}

func (t *deleteSymbol) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a deleteSymbolArgs
	if err := decodeArgs("delete_symbol", raw, &a, "path", "symbol"); err != nil {
		return "", err
	}
	a.Symbol = strings.TrimSpace(strings.NewReplacer("(", "", ")", "", "*", "").Replace(a.Symbol))
	if a.Symbol == "" {
		return "", fmt.Errorf("delete_symbol: symbol must not be empty")
	}
	if !strings.HasSuffix(a.Path, ".go") {
		return "", fmt.Errorf("delete_symbol: %s is not a Go file; use delete_range", a.Path)
	}
	p, err := writePath("delete_symbol", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, perm, err := readTextFile(ctx, t.env, "delete_symbol", a.Path, p)
	if err != nil {
		return "", err
	}
	if err := checkSeen("delete_symbol", t.env, a.Path, p); err != nil {
		return "", err
	}
	out, what, err := removeGoDecl(data, a.Symbol)
	if err != nil {
		return "", fmt.Errorf("delete_symbol: %s: %w", a.Path, err)
	}
	if err := writeText(ctx, t.env, p, out.src, perm); err != nil {
		return "", fmt.Errorf("delete_symbol: %w", err)
	}
	sawFile(t.env, p)
	msg := fmt.Sprintf("deleted %s (was lines %d-%d) from %s", what, out.first, out.last, displayPath(t.env, p))
	if len(out.imports) > 0 {
		msg += "; removed the imports only it used: " + strings.Join(out.imports, ", ")
	}
	if out.refs > 0 {
		msg += fmt.Sprintf("; %s to %s remain in this file", plural(out.refs, "reference"), out.name)
	}
	return msg, nil
}

// goRemoval is the outcome of removeGoDecl.
type goRemoval struct {
	src         []byte
	first, last int      // the removed lines, doc comment included
	imports     []string // import paths removed with it
	name        string   // the declared name, without a receiver
	refs        int      // identifiers still naming it in the file
}

// removeGoDecl removes the top-level declaration symbol from the Go source
// src and reports what it removed ("func F", "method T.M").
func removeGoDecl(src []byte, symbol string) (goRemoval, string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return goRemoval{}, "", fmt.Errorf("not valid Go (%v); fix it first or use delete_range", firstLine(err.Error()))
	}
	type match struct {
		what       string
		start, end token.Pos
	}
	var found []match
	var together string
	recv, name, isMethod := strings.Cut(symbol, ".")
	if !isMethod {
		name = recv
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != name || (d.Recv != nil) != isMethod || isMethod && codeindex.ReceiverType(d.Recv) != recv {
				continue
			}
			what := "func " + name
			if isMethod {
				what = "method " + symbol
			}
			found = append(found, match{what, docStart(d.Doc, d.Pos()), d.End()})
		case *ast.GenDecl:
			if isMethod || d.Tok == token.IMPORT {
				continue
			}
			for _, s := range d.Specs {
				var names []*ast.Ident
				var doc, comment *ast.CommentGroup
				switch s := s.(type) {
				case *ast.TypeSpec:
					names, doc, comment = []*ast.Ident{s.Name}, s.Doc, s.Comment
				case *ast.ValueSpec:
					names, doc, comment = s.Names, s.Doc, s.Comment
				}
				if !slices.ContainsFunc(names, func(id *ast.Ident) bool { return id.Name == name }) {
					continue
				}
				if len(names) > 1 {
					together = fmt.Sprintf("%s is declared together with other names in one %s spec; change it with edit_file", name, d.Tok)
					continue
				}
				m := match{d.Tok.String() + " " + name, docStart(doc, s.Pos()), s.End()}
				if comment != nil {
					m.end = max(m.end, comment.End())
				}
				if len(d.Specs) == 1 { // the whole declaration goes, parentheses and all
					m.start, m.end = docStart(d.Doc, d.Pos()), max(m.end, d.End())
				}
				found = append(found, m)
			}
		}
	}
	switch {
	case len(found) == 0 && together != "":
		return goRemoval{}, "", fmt.Errorf("%s", together)
	case len(found) == 0:
		return goRemoval{}, "", fmt.Errorf("no top-level declaration named %s (a method is named Type.Method)", symbol)
	case len(found) > 1:
		return goRemoval{}, "", fmt.Errorf("%d declarations are named %s; remove the one you mean with delete_range", len(found), symbol)
	}
	m := found[0]
	tf := fset.File(f.Pos())
	start, end := wholeLines(src, tf.Offset(m.start), tf.Offset(m.end))
	out := goRemoval{first: tf.Line(m.start), last: tf.Line(m.end), name: name}
	cut := append(bytes.Clone(src[:start]), src[end:]...)
	cut, out.imports = dropDeadImports(f, cut)
	formatted, err := format.Source(cut)
	if err != nil {
		return goRemoval{}, "", fmt.Errorf("removing %s would leave invalid Go (%v); use delete_range", m.what, firstLine(err.Error()))
	}
	out.src = formatted
	if g, err := parser.ParseFile(token.NewFileSet(), "", formatted, parser.SkipObjectResolution); err == nil {
		ast.Inspect(g, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == name {
				out.refs++
			}
			return true
		})
	}
	return out, m.what, nil
}

// docStart is where a declaration begins counting its doc comment.
func docStart(doc *ast.CommentGroup, pos token.Pos) token.Pos {
	if doc != nil {
		return doc.Pos()
	}
	return pos
}

// wholeLines widens [start, end) to whole lines where only blanks share
// them, so no indentation or empty line is left behind.
func wholeLines(src []byte, start, end int) (int, int) {
	s := start
	for s > 0 && (src[s-1] == ' ' || src[s-1] == '\t') {
		s--
	}
	if s == 0 || src[s-1] == '\n' {
		start = s
	}
	e := end
	for e < len(src) && (src[e] == ' ' || src[e] == '\t' || src[e] == '\r') {
		e++
	}
	if e == len(src) || src[e] == '\n' {
		end = min(e+1, len(src))
	}
	return start, end
}

// dropDeadImports removes from src (orig's file after a cut) the imports
// that orig's code used and src's no longer does, so the file still
// compiles. Without type information an import's name is a guess; a guess
// that is wrong found no uses in orig either, and that import is kept.
func dropDeadImports(orig *ast.File, src []byte) ([]byte, []string) {
	nf := token.NewFileSet()
	f, err := parser.ParseFile(nf, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return src, nil
	}
	before, after := selectorUses(orig), selectorUses(f)
	file := nf.File(f.Pos())
	var ranges [][2]int
	var removed []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var dead [][2]int
		for _, s := range g.Specs {
			is := s.(*ast.ImportSpec)
			ipath, err := strconv.Unquote(is.Path.Value)
			if err != nil || ipath == "C" {
				continue
			}
			name := importName(ipath)
			if is.Name != nil {
				name = is.Name.Name
			}
			if name == "_" || name == "." || before[name] == 0 || after[name] > 0 {
				continue
			}
			end := is.End()
			if is.Comment != nil {
				end = max(end, is.Comment.End())
			}
			a, b := wholeLines(src, file.Offset(docStart(is.Doc, is.Pos())), file.Offset(end))
			dead = append(dead, [2]int{a, b})
			removed = append(removed, ipath)
		}
		if len(dead) > 0 && len(dead) == len(g.Specs) { // no empty import () left behind
			a, b := wholeLines(src, file.Offset(docStart(g.Doc, g.Pos())), file.Offset(g.End()))
			dead = [][2]int{{a, b}}
		}
		ranges = append(ranges, dead...)
	}
	for i := len(ranges) - 1; i >= 0; i-- {
		src = append(src[:ranges[i][0]], src[ranges[i][1]:]...)
	}
	return src, removed
}

// selectorUses counts, per identifier, its uses as the X of X.Sel: the
// only way a file refers to an imported package.
func selectorUses(f *ast.File) map[string]int {
	uses := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				uses[id.Name]++
			}
		}
		return true
	})
	return uses
}

// importName guesses the package name of an import path the way
// goimports does without loading it: the last element, without a major
// version element, a "go-" prefix or a ".vN" suffix.
func importName(ipath string) string {
	base := path.Base(ipath)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && path.Dir(ipath) != "." {
		base = path.Base(path.Dir(ipath))
	}
	base = strings.TrimPrefix(base, "go-")
	if i := strings.Index(base, ".v"); i > 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
