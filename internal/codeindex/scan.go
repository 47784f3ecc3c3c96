package codeindex

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// containerKinds are the kinds whose members are indented under them.
var containerKinds = map[string]bool{"class": true, "struct": true, "interface": true, "trait": true, "enum": true, "module": true, "impl": true}

// notCallable are words that start a statement, not a declaration, when
// followed by "(".
var notCallable = words("if for while switch catch return new else do throw sizeof case synchronized using lock foreach elif until with await yield typeof delete when match assert super this")

// open is a declaration whose members follow, indented deeper.
type open struct {
	name   string
	indent int
	member int // indentation of its first member, -1 until seen
}

// scanLines is the line scanner for languages other than Go. It reads
// declarations from their first line only, so it never needs to balance
// brackets; indentation stands in for nesting. It is approximate by
// design, and never fails: input it does not understand yields no symbols.
func scanLines(l *language, rel string, src []byte) []Symbol {
	var out []Symbol
	var stack []open
	inBlock, inDoc := false, ""
	lineNo := 0
	for len(src) > 0 {
		lineNo++
		var raw []byte
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			raw, src = src[:i], src[i+1:]
		} else {
			raw, src = src, nil
		}
		line := strings.TrimRight(string(raw), " \t\r")
		text := strings.TrimLeft(line, " \t")
		if text == "" {
			continue
		}
		indent := len(line) - len(text)
		if l.headings {
			if strings.HasPrefix(text, "```") || strings.HasPrefix(text, "~~~") {
				inBlock = !inBlock // a fenced code block's # lines are not headings
				continue
			}
			if h := heading(text); !inBlock && h != "" {
				out = append(out, Symbol{Name: h, Kind: "heading", Path: rel, Line: lineNo, Text: bound(text)})
			}
			continue
		}
		if inBlock {
			if strings.Contains(text, "*/") {
				inBlock = false
			}
			continue
		}
		if inDoc != "" {
			if strings.Contains(text, inDoc) {
				inDoc = ""
			}
			continue
		}
		if l.blockComments && strings.HasPrefix(text, "/*") {
			inBlock = !strings.Contains(text[2:], "*/")
			continue
		}
		if l.docstrings {
			if q := docQuote(text); q != "" {
				if strings.Count(text, q) == 1 {
					inDoc = q
				}
				continue
			}
		}
		if text[0] == '*' || text[0] == '@' || hasAnyPrefix(text, l.comments) && !(l == langC && strings.HasPrefix(text, "#define")) {
			continue
		}
		for len(stack) > 0 && indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		container := ""
		memberLine := false
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if top.member < 0 {
				top.member = indent
			}
			container, memberLine = top.name, indent == top.member
		}
		s, ok := declaration(l, text, indent, container, memberLine)
		if !ok {
			continue
		}
		s.Path, s.Line, s.Text = rel, lineNo, bound(text)
		if s.Kind != "impl" {
			out = append(out, s)
		}
		if containerKinds[s.Kind] && !strings.HasSuffix(text, ";") && !strings.HasSuffix(text, "}") {
			stack = append(stack, open{name: s.Name, indent: indent, member: -1})
		}
	}
	return out
}

// declaration reads the declaration a line opens, if any.
func declaration(l *language, text string, indent int, container string, member bool) (Symbol, bool) {
	if l == langC && strings.HasPrefix(text, "#define") {
		if name, _ := ident(strings.TrimLeft(text[len("#define"):], " \t")); name != "" {
			return Symbol{Name: name, Kind: "macro"}, true
		}
		return Symbol{}, false
	}
	rest := text
	var word string
	for {
		word, rest = firstWord(rest)
		if word == "" {
			return Symbol{}, false
		}
		if l.modifiers[word] || word == "pub" && strings.HasPrefix(rest, "(") {
			rest = skipGroup(rest) // pub(crate), extern "C"
			continue
		}
		break
	}
	if kind, ok := l.keywords[word]; ok {
		rest = strings.TrimLeft(rest, " \t!*")
		if kind == "impl" {
			return implTarget(rest)
		}
		if l == langRuby {
			rest = strings.TrimPrefix(rest, "self.")
		}
		name, after := ident(rest)
		if name == "" {
			return Symbol{}, false
		}
		if (l == langLua || l == langRuby) && (strings.HasPrefix(after, ".") || strings.HasPrefix(after, ":")) {
			if m, _ := ident(after[1:]); m != "" {
				container, name = name, m
			}
		}
		if kind == "type" && l == langJS && !strings.Contains(after, "=") {
			return Symbol{}, false // "type" used as a plain word
		}
		if kind == "func" && container != "" {
			kind = "method"
		}
		return Symbol{Name: name, Kind: kind, Container: container}, true
	}
	if l.bindings && container == "" && indent == 0 && (word == "const" || word == "let" || word == "var") {
		name, after := ident(strings.TrimLeft(rest, " \t"))
		if name == "" {
			return Symbol{}, false
		}
		kind := "var"
		switch {
		case strings.Contains(after, "=>") || strings.Contains(after, "function"):
			kind = "func"
		case word == "const":
			kind = "const"
		}
		return Symbol{Name: name, Kind: kind}, true
	}
	if l.shell {
		if name, after := ident(text); name != "" && strings.HasPrefix(strings.TrimLeft(after, " \t"), "()") {
			return Symbol{Name: name, Kind: "func"}, true
		}
	}
	if l.callables && (member || container == "" && indent == 0) {
		return callable(l, text, container)
	}
	return Symbol{}, false
}

// callable reads "[type…] name(…)" as a function or method declaration
// when it cannot be a statement: no assignment before the parenthesis,
// not ending in ";", not starting with a control word, and at the top
// level a return type before the name.
func callable(l *language, text, container string) (Symbol, bool) {
	paren := strings.IndexByte(text, '(')
	if paren <= 0 || strings.HasSuffix(text, ";") || strings.HasSuffix(text, ",") {
		return Symbol{}, false
	}
	head := strings.TrimRight(text[:paren], " \t")
	if strings.ContainsAny(head, "=;{}()\"'`!|+") {
		return Symbol{}, false
	}
	fields := strings.Fields(head)
	for len(fields) > 0 && l.modifiers[fields[0]] {
		fields = fields[1:]
	}
	if len(fields) == 0 || notCallable[fields[0]] || container == "" && len(fields) < 2 {
		return Symbol{}, false
	}
	last := strings.TrimLeft(fields[len(fields)-1], "*&")
	if i := strings.LastIndex(last, "::"); i >= 0 { // C++ Type::method
		container, last = last[:i], last[i+2:]
		if j := strings.LastIndex(container, "::"); j >= 0 {
			container = container[j+2:]
		}
	}
	name, after := ident(last)
	if name == "" || after != "" || notCallable[name] {
		return Symbol{}, false
	}
	kind := "func"
	if container != "" {
		kind = "method"
	}
	return Symbol{Name: name, Kind: kind, Container: container}, true
}

// implTarget reads Rust's "impl<T> Trait for Type" as a container named
// Type.
func implTarget(rest string) (Symbol, bool) {
	rest = skipAngles(rest)
	if i := strings.Index(rest, " for "); i >= 0 {
		rest = rest[i+len(" for "):]
	}
	rest = strings.TrimLeft(rest, " \t&")
	for {
		name, after := ident(rest)
		if name == "" {
			return Symbol{}, false
		}
		if !strings.HasPrefix(after, "::") {
			return Symbol{Name: name, Kind: "impl"}, true
		}
		rest = after[2:]
	}
}

// skipAngles drops a leading <…> (generic parameters) from s.
func skipAngles(s string) string {
	s = strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(s, "<") {
		return s
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			if depth--; depth == 0 {
				return s[i+1:]
			}
		}
	}
	return ""
}

// skipGroup drops a leading (…) or "…" from s.
func skipGroup(s string) string {
	t := strings.TrimLeft(s, " \t")
	var closer string
	switch {
	case strings.HasPrefix(t, "("):
		closer = ")"
	case strings.HasPrefix(t, `"`):
		closer = `"`
	default:
		return s
	}
	if i := strings.Index(t[1:], closer); i >= 0 {
		return t[i+2:]
	}
	return ""
}

// firstWord splits off the leading word of s (after blanks).
func firstWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := 0
	for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '(' && s[i] != '<' && s[i] != '{' && s[i] != '!' && s[i] != ':' {
		i++
	}
	return s[:i], s[i:]
}

// ident splits a leading identifier (letters, digits, _ and $, not
// starting with a digit) off s.
func ident(s string) (string, string) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !(r == '_' || r == '$' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			break
		}
		i += size
	}
	return s[:i], s[i:]
}

// heading is the text of a Markdown heading of level 1 to 3.
func heading(text string) string {
	level := len(text) - len(strings.TrimLeft(text, "#"))
	if level < 1 || level > 3 || len(text) == level || text[level] != ' ' {
		return ""
	}
	return bound(strings.TrimSpace(strings.Trim(strings.TrimSpace(text[level:]), "#")))
}

// docQuote is the triple quote a Python line starts with, if any.
func docQuote(text string) string {
	t := strings.TrimLeft(text, "rbuRBU")
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(t, q) {
			return q
		}
	}
	return ""
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
