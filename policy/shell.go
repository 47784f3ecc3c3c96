package policy

import (
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// shellPart is one simple command found in a shell script.
type shellPart struct {
	// words are the command's words after unwrapping transparent wrappers
	// (timeout, nice, env, …): the wrapped command decides. A word that is
	// not a plain literal holds its source text instead of its value.
	words    []string
	readOnly bool // the command only reads
}

// shellFacts is what the policy needs to know about a shell command.
type shellFacts struct {
	parts []shellPart
	// extra are further word lists deny and ask rules are matched against:
	// the command as written before unwrapping, and every tail of an
	// indirect command (xargs rm, find -exec rm), so a deny rule sees what
	// may actually run.
	extra    [][]string
	compound bool   // more than one command, or any shell operator or construct
	dynamic  bool   // expansions, assignments, globs, heredocs, unproved redirects
	nested   string // why the command executes code indirectly; empty when it does not
	// dynName says why some command that runs is only known at run time (a
	// computed name, eval of a computed string, a shell reading commands
	// from a pipe): no rule can see it, so any Bash deny rule refuses it.
	dynName string
	// computed are the commands with a literal name and computed words
	// (`git $X`), which a deny rule must assume may say anything there.
	computed []computedCmd
	readOnly bool // every part only reads and nothing is dynamic or nested
}

// computedCmd is a command some of whose words are only known at run time.
type computedCmd struct {
	words []string
	lit   []bool
}

// maxShellDepth bounds how deep command strings (bash -c '…', eval) are
// parsed again to show deny rules what they run.
const maxShellDepth = 3

var parserPool = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// analyzeShell parses a bash command with a real parser and classifies it.
// It never fails: a command that does not parse needs a human.
func analyzeShell(src string) *shellFacts {
	f := &shellFacts{}
	a := analyzer{facts: f}
	a.run(src, 0)
	f.readOnly = f.nested == "" && !f.dynamic && len(f.parts) > 0
	for _, p := range f.parts {
		f.readOnly = f.readOnly && p.readOnly
	}
	return f
}

type analyzer struct {
	facts *shellFacts
	// Bash evaluates array subscripts inside strings it treats as numbers
	// or variable names (`let`, `$((x))`, `[[ … -eq … ]]`, `test -v`,
	// `printf -v`), and `$(…)` in such a subscript runs. The parser sees
	// only a quoted string, so a script with both an arithmetic context
	// (arith) and a string holding `$(` or a backtick (codeText) runs code
	// nobody can see.
	arith, codeText bool
}

func (a *analyzer) nest(why string) {
	if a.facts.nested == "" {
		a.facts.nested = why
	}
}

// unseen records a command deny rules cannot see; it is nested execution too.
func (a *analyzer) unseen(why string) {
	a.nest(why)
	if a.facts.dynName == "" {
		a.facts.dynName = why
	}
}

func (a *analyzer) run(src string, depth int) {
	p := parserPool.Get().(*syntax.Parser)
	file, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	if err != nil {
		a.unseen("the command could not be parsed")
		a.facts.extra = append(a.facts.extra, strings.Fields(src))
		return
	}
	if len(file.Stmts) > 1 {
		a.facts.compound = true
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			a.codeText = a.codeText || looksLikeCode(n.Value)
		case *syntax.SglQuoted:
			a.codeText = a.codeText || looksLikeCode(n.Value)
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.DeclClause, *syntax.TestClause:
			a.arith = true
		case *syntax.CallExpr:
			a.arith = a.arith || evaluatesNames(n)
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Negated || n.Disown {
				a.facts.compound = true
			}
			for _, r := range n.Redirs {
				if !safeRedirect(r) {
					a.facts.dynamic = true
				}
			}
		case *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block, *syntax.IfClause,
			*syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.TestDecl:
			a.facts.compound = true
		case *syntax.FuncDecl:
			a.facts.compound = true
			a.nest("it defines a shell function")
		case *syntax.CoprocClause:
			a.facts.compound = true
			a.nest("it starts a coprocess")
		case *syntax.CmdSubst:
			a.nest("it uses command substitution")
		case *syntax.ProcSubst:
			a.nest("it uses process substitution")
		case *syntax.ParamExp, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.ExtGlob,
			*syntax.BraceExp, *syntax.LetClause, *syntax.DeclClause, *syntax.TestClause, *syntax.Assign:
			a.facts.dynamic = true
		case *syntax.CallExpr:
			a.call(src, n, depth)
		}
		return true
	})
	if a.arith && a.codeText {
		a.unseen("a quoted string may run as code when bash evaluates it as a number or variable name")
	}
}

func looksLikeCode(s string) bool { return strings.Contains(s, "$(") || strings.Contains(s, "`") }

// evaluatesNames reports builtins that evaluate an argument as a variable
// name or number (test -v, printf -v, read, mapfile), whatever its quoting.
func evaluatesNames(ce *syntax.CallExpr) bool {
	if len(ce.Args) == 0 {
		return false
	}
	name := ce.Args[0].Lit()
	switch name {
	case "read", "mapfile", "readarray", "unset", "declare", "typeset", "local", "export", "readonly", "let":
		return true
	case "test", "[", "printf":
		for _, w := range ce.Args[1:] {
			if w.Lit() == "-v" {
				return true
			}
		}
	}
	return false
}

// call records one simple command.
func (a *analyzer) call(src string, ce *syntax.CallExpr, depth int) {
	if len(ce.Args) == 0 {
		return // a bare assignment; the Assign node marks it dynamic
	}
	words := make([]string, len(ce.Args))
	lit := make([]bool, len(ce.Args))
	for i, w := range ce.Args {
		words[i], lit[i] = wordValue(src, w)
		if !lit[i] {
			a.facts.dynamic = true
		}
	}
	if !lit[0] {
		a.unseen("the command name is computed at run time")
		a.facts.parts = append(a.facts.parts, shellPart{words: words})
		return
	}
	start, elevated, assigns, why := unwrap(words, lit)
	if assigns {
		a.facts.dynamic = true
	}
	if why != "" {
		a.unseen(why) // the wrapper's options hide which command runs
	}
	if start > 0 {
		a.facts.extra = append(a.facts.extra, words)
	}
	if start >= len(words) {
		// A wrapper with no command (`env`, `command -v x`) only reports.
		a.facts.parts = append(a.facts.parts, shellPart{words: words, readOnly: why == "" && !elevated})
		return
	}
	if start > 0 && !lit[start] {
		a.unseen("the wrapped command name is computed at run time")
	}
	inner := words[start:]
	if norm, ok := stripGitGlobals(inner); ok {
		a.facts.extra = append(a.facts.extra, norm)
	}
	if !allLit(lit[start:]) {
		// A copy, so lit itself stays on the stack for the common literal case.
		a.facts.computed = append(a.facts.computed, computedCmd{inner, slices.Clone(lit[start:])})
	}
	c := classify(inner, lit[start:])
	if c.dynName != "" {
		a.unseen(c.dynName)
	}
	a.facts.extra = append(a.facts.extra, c.also...)
	if c.nested != "" {
		a.nest(c.nested)
		for i := 1; i < len(inner) && i < 64; i++ {
			a.facts.extra = append(a.facts.extra, inner[i:])
		}
	}
	if c.script != "" && depth < maxShellDepth {
		a.run(c.script, depth+1)
	}
	if elevated {
		// Under sudo the command as written decides for allow rules, so
		// `Bash(go test:*)` does not cover `sudo go test`; deny rules still
		// see the wrapped command through extra.
		a.facts.extra = append(a.facts.extra, inner)
		inner = words
	}
	a.facts.parts = append(a.facts.parts, shellPart{words: inner, readOnly: c.readOnly && !elevated && why == ""})
}

// wordValue returns a word's value when it is a plain literal (quotes
// removed, escapes resolved) and otherwise its source text with false.
func wordValue(src string, w *syntax.Word) (string, bool) {
	var sb strings.Builder
	ok := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, lok := unescapeLit(p.Value, i == 0)
			ok = ok && lok
			sb.WriteString(v)
		case *syntax.SglQuoted:
			ok = ok && !p.Dollar // $'…' has its own escapes
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			ok = ok && !p.Dollar
			for _, q := range p.Parts {
				l, isLit := q.(*syntax.Lit)
				if !isLit {
					ok = false
					continue
				}
				sb.WriteString(unescapeDouble(l.Value))
			}
		default:
			ok = false
		}
	}
	if !ok {
		start, end := int(w.Pos().Offset()), int(w.End().Offset())
		if start >= 0 && end <= len(src) && start <= end {
			return src[start:end], false
		}
		return sb.String(), false
	}
	return sb.String(), true
}

// unescapeLit resolves backslashes of an unquoted literal. It reports false
// when the shell would expand the literal: globs, a leading tilde, braces.
func unescapeLit(v string, first bool) (string, bool) {
	// Bash also expands a tilde after the `=` or a `:` of a word that looks
	// like an assignment, even as an argument (`dd of=~/x`).
	ok := !(first && strings.HasPrefix(v, "~")) && !strings.Contains(v, "=~") && !strings.Contains(v, ":~")
	var sb strings.Builder
	braceOpen := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				sb.WriteByte(v[i])
			}
			continue
		case c == '*' || c == '?':
			ok = false
		case c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			ok = false // a bracket expression; a lone `[` (the test command) is literal
		case c == '{':
			braceOpen = true
		case braceOpen && (c == ',' || c == '.' && i+1 < len(v) && v[i+1] == '.'):
			ok = false
		}
		sb.WriteByte(c)
	}
	return sb.String(), ok
}

// unescapeDouble resolves the few escapes double quotes know.
func unescapeDouble(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] != '\n' {
				sb.WriteByte(v[i])
			}
			continue
		}
		sb.WriteByte(v[i])
	}
	return sb.String()
}

// safeRedirect reports the redirects proven harmless: joining or closing
// the standard streams and discarding output to /dev/null.
func safeRedirect(r *syntax.Redirect) bool {
	if r.N != nil && r.N.Value != "1" && r.N.Value != "2" {
		return false
	}
	if r.Word == nil || len(r.Word.Parts) != 1 {
		return false
	}
	l, ok := r.Word.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	switch r.Op {
	case syntax.DplOut:
		return l.Value == "1" || l.Value == "2" || l.Value == "-"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrIn:
		return l.Value == "/dev/null"
	}
	return false
}

func baseName(w string) string { return path.Base(w) }
