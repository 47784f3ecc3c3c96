package codeindex

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// scanGo lists the top-level declarations of a Go file and the methods of
// its interfaces. A file that does not parse gives what the parser
// recovered.
func scanGo(rel string, src []byte) []Symbol {
	fset := token.NewFileSet()
	// Function bodies are most of a file and declare nothing the index
	// lists: parse a copy without them, and the whole file only when the
	// copy does not parse (a file not gofmt-formatted).
	f, err := parser.ParseFile(fset, "", withoutBodiesFunc(src), parser.SkipObjectResolution)
	if err != nil {
		fset = token.NewFileSet()
		f, _ = parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	}
	if f == nil {
		return nil
	}
	tf := fset.File(f.Pos())
	var out []Symbol
	add := func(name, kind, container string, pos token.Pos) {
		if name == "_" || name == "" || !pos.IsValid() || int(pos) > tf.Base()+tf.Size() {
			return
		}
		line := tf.Line(pos)
		out = append(out, Symbol{Name: name, Kind: kind, Container: container, Path: rel, Line: line, Text: lineText(src, tf, line)})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				add(d.Name.Name, "method", ReceiverType(d.Recv), d.Name.Pos())
			} else {
				add(d.Name.Name, "func", "", d.Name.Pos())
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					kind := "type"
					switch t := s.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
						for _, m := range t.Methods.List {
							if _, ok := m.Type.(*ast.FuncType); ok && len(m.Names) > 0 {
								add(m.Names[0].Name, "method", s.Name.Name, m.Names[0].Pos())
							}
						}
					}
					add(s.Name.Name, kind, "", s.Name.Pos())
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n.Name, d.Tok.String(), "", n.Pos())
					}
				}
			}
		}
	}
	return out
}

// ReceiverType is the base type name of a method's receiver list: T for
// T, *T, T[K] and *T[K, V]; "" for none. delete_symbol names methods the
// same way.
func ReceiverType(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	e := fl.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// lineText is line n of src, trimmed and bounded.
func lineText(src []byte, tf *token.File, n int) string {
	start := tf.Offset(tf.LineStart(n))
	end := bytes.IndexByte(src[start:], '\n')
	if end < 0 {
		end = len(src) - start
	}
	return bound(strings.TrimSpace(string(src[start : start+end])))
}

// bound cuts s to maxText bytes on a rune boundary.
func bound(s string) string {
	if len(s) <= maxText {
		return strings.ToValidUTF8(s, "")
	}
	return strings.ToValidUTF8(s[:maxText], "") + "…"
}

// withoutBodies blanks the bodies of the top-level functions of gofmt-formatted
// Go source — from a line "func … {" to the next line "}" — keeping every
// newline, so positions keep their line numbers. A body the layout does not
// give away is left in place.
func withoutBodies(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inBody := false
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i+1], src[i+1:]
		} else {
			src = nil
		}
		text := bytes.TrimRight(line, "\r\n")
		switch {
		case inBody && string(text) == "}":
			inBody = false
			out = append(out, line...)
		case inBody:
			out = append(out, '\n')
		default:
			out = append(out, line...)
			inBody = bytes.HasPrefix(text, []byte("func ")) && bytes.HasSuffix(text, []byte("{"))
		}
	}
	return out
}

// withoutBodiesFunc is withoutBodies; a test compares it with the identity.
var withoutBodiesFunc = withoutBodies
