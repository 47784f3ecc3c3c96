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
	// carrier: the command only runs a command string the analyser parsed
	// (sh -c '…', eval '…'), whose commands are parts too. (The commands
	// xargs or find -exec run are not all parts, so those are no carriers.)
	carrier bool
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
	// opaque says why some code runs that no deny rule can read, although
	// its command is known: an interpreter's inline program, awk's
	// system(), sed's e, tar's exec actions, commands git takes from its
	// configuration or the environment, a workspace program or script that
	// cannot be identified before it runs. Unlike dynName it may be
	// harmless; a person may approve it, no posture lets it through alone
	// while a Bash deny rule names a command (see denyUnseen).
	opaque string
	// files are the workspace programs and scripts the command runs by
	// path; resolveFiles identifies them when the workspace is known.
	files []fileRun
	// binRefs are the base names of system binaries (/bin/rm) a command
	// that is not read-only names as an argument: copying or linking a
	// denied command is refused like running it.
	binRefs []string
	// cds are the literal directories cd and pushd change to, in order;
	// cdUnknown is set when one is computed.
	cds       []string
	cdUnknown bool
	// writes is set when a redirect writes a file.
	writes   bool
	readOnly bool // every part only reads and nothing is dynamic or nested
}

// fileRun is a program or script run from a file named by a path.
type fileRun struct {
	path   string
	words  []string // the command as written, for deny rules once identified
	script bool     // a shell reads the file (bash s.sh, source s.sh)
	part   int      // index of the part running it, -1 for a tail
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
	f.finish()
	return f
}

// finish sets readOnly once every part is known.
func (f *shellFacts) finish() {
	f.readOnly = f.nested == "" && !f.dynamic && len(f.parts) > 0
	for _, p := range f.parts {
		f.readOnly = f.readOnly && p.readOnly
	}
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
	// tailsSeen counts the commands found in other commands' arguments
	// (tails), which maxTails bounds: `xargs xargs xargs …` would
	// otherwise take time exponential in its depth.
	tailsSeen int
}

// maxTails bounds the commands analysed inside other commands' arguments.
const maxTails = 32

func (a *analyzer) nest(why string) {
	if a.facts.nested == "" {
		a.facts.nested = why
	}
}

// hide records code deny rules cannot read (see shellFacts.opaque). It is
// not nested execution by itself: without a Bash deny rule it changes
// nothing.
func (a *analyzer) hide(why string) {
	if a.facts.opaque == "" {
		a.facts.opaque = why
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
					a.facts.writes = a.facts.writes || writesFile(r)
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
		case *syntax.Assign:
			a.facts.dynamic = true
			if n.Name != nil {
				value := ""
				if n.Value != nil {
					value = nodeText(src, n.Value)
				}
				if why := commandVar(n.Name.Value, value, n.Value != nil); why != "" {
					a.hide(why)
				}
			}
		case *syntax.ParamExp, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.ExtGlob,
			*syntax.BraceExp, *syntax.LetClause, *syntax.DeclClause, *syntax.TestClause:
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
	a.command(words, lit, depth, true)
}

// command records one simple command given as words. top is false for a
// command another one runs (xargs sh -c …, find -exec …), found by
// looking into its arguments.
func (a *analyzer) command(words []string, lit []bool, depth int, top bool) {
	if !lit[0] {
		a.unseen("the command name is computed at run time")
		a.facts.parts = append(a.facts.parts, shellPart{words: words})
		return
	}
	for i, w := range words {
		// `env GIT_SSH_COMMAND=…`, `env PATH=$PATH:.`, `read BASH_ENV`: a
		// variable that names commands, set by a command's argument (a
		// computed word holds its source text).
		if name, value, isAssign := strings.Cut(w, "="); i > 0 && (isAssign || setsVars[baseName(words[0])]) {
			if why := commandVar(name, value, isAssign); why != "" {
				a.hide(why)
			}
		}
		if !lit[i] {
			continue
		}
		if i > 0 && systemCommand(w) {
			a.facts.binRefs = append(a.facts.binRefs, baseName(w))
		} else if _, v, ok := strings.Cut(w, "="); ok && i > 0 && systemCommand(v) {
			a.facts.binRefs = append(a.facts.binRefs, baseName(v)) // dd if=/bin/rm
		}
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
	innerLit := lit[start:]
	if norm, ok := stripGitGlobals(inner); ok {
		a.facts.extra = append(a.facts.extra, norm)
	}
	if !allLit(innerLit) {
		// A copy, so lit itself stays on the stack for the common literal case.
		a.facts.computed = append(a.facts.computed, computedCmd{inner, slices.Clone(innerLit)})
	}
	c := classify(inner, innerLit)
	if c.dynName != "" {
		a.unseen(c.dynName)
	}
	if c.opaque != "" {
		a.hide(c.opaque)
	}
	a.facts.extra = append(a.facts.extra, c.also...)
	if baseName(inner[0]) == "cd" || baseName(inner[0]) == "pushd" {
		a.cd(inner[1:], innerLit[1:])
	}
	if c.nested != "" {
		a.nest(c.nested)
		for i := 1; i < len(inner) && i < 64; i++ {
			a.facts.extra = append(a.facts.extra, inner[i:])
		}
		if c.runsArgs && depth < maxShellDepth {
			a.tails(inner, innerLit, depth)
		}
	}
	if c.script != "" && depth < maxShellDepth {
		a.run(c.script, depth+1)
	}
	for _, s := range c.scripts {
		if depth < maxShellDepth {
			a.run(s, depth+1)
		}
	}
	if elevated {
		// Under sudo the command as written decides for allow rules, so
		// `Bash(go test:*)` does not cover `sudo go test`; deny rules still
		// see the wrapped command through extra.
		a.facts.extra = append(a.facts.extra, inner)
	}
	// The part appended below is this command's; a tail has none.
	part := len(a.facts.parts)
	if !top {
		part = -1
	}
	if innerLit[0] && strings.Contains(inner[0], "/") && !systemCommand(inner[0]) {
		a.facts.files = append(a.facts.files, fileRun{path: inner[0], words: inner, part: part})
	}
	if c.scriptFile != "" {
		a.facts.files = append(a.facts.files, fileRun{path: c.scriptFile, words: inner, script: true, part: part})
	}
	if elevated {
		inner = words
	}
	a.facts.parts = append(a.facts.parts, shellPart{words: inner, readOnly: c.readOnly && !elevated && why == "",
		carrier: c.script != "" && len(c.scripts) == 0})
}

// tails looks into the arguments of a command that runs a command line
// given as its arguments (xargs, find -exec, strace, fakeroot, …): each
// argument that names a program which runs code (a shell, an interpreter,
// another runner) or a program by path starts a command analysed as if
// written alone, so `xargs sh -c 'rm {}'` shows its rm to deny rules and
// `find . -exec python3 -c …` is known to run unreadable code. The words
// xargs -I and find replace with their input or file names (its string,
// {}) count as computed.
func (a *analyzer) tails(inner []string, lit []bool, depth int) {
	replace := ""
	switch baseName(inner[0]) {
	case "xargs":
		replace = xargsReplace(inner[1:])
	case "find":
		replace = "{}"
	}
	for i := 1; i < len(inner) && i < 64; i++ {
		w := inner[i]
		if !lit[i] || strings.HasPrefix(w, "-") || !(runsCode(baseName(w)) || strings.Contains(w, "/") && !systemCommand(w)) {
			continue
		}
		words := inner[i:]
		tl := slices.Clone(lit[i:])
		for j, tw := range words {
			if replace != "" && strings.Contains(tw, replace) {
				tl[j] = false
			}
		}
		if !tl[0] {
			continue
		}
		if a.tailsSeen++; a.tailsSeen > maxTails {
			a.unseen("it nests more commands in its arguments than can be checked")
			return
		}
		a.command(words, tl, depth+1, false)
	}
}

// cd records the directory cd or pushd changes to.
func (a *analyzer) cd(args []string, lit []bool) {
	for i, w := range args {
		switch {
		case w == "--" || w == "-L" || w == "-P" || w == "-e" || w == "-@":
			continue
		case !lit[i] || w == "-" || strings.HasPrefix(w, "~") || strings.HasPrefix(w, "+") || strings.HasPrefix(w, "-"):
			a.facts.cdUnknown = true
		default:
			a.facts.cds = append(a.facts.cds, w)
		}
		return
	}
	a.facts.cdUnknown = true // cd alone goes home
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

// nodeText returns the source text of a node.
func nodeText(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return ""
	}
	return src[start:end]
}

// writesFile reports a redirect that writes to a file.
func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut, syntax.RdrInOut:
		return true
	case syntax.DplOut:
		return r.Word == nil || r.Word.Lit() == "" || strings.Trim(r.Word.Lit(), "0123456789-") != ""
	}
	return false
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
