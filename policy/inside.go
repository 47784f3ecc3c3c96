package policy

import (
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ShellStaysInside reports whether every write the bash command cmd can
// make provably lands inside workdir or one of allowWrite (absolute
// directories). It serves hosts where bash runs without an OS sandbox:
// there the auto posture lets through only commands proven to stay inside.
//
// "Proven" is conservative by design; anything the analysis cannot follow
// is not proven, and reason says what:
//   - the command parses, and uses no variables, arithmetic, assignments,
//     functions or other run-time text in a place that decides a path or a
//     command;
//   - every redirect that writes (>, >>, &>, >|, <>) names a literal path
//     that resolves inside (/dev/null and the standard streams are fine);
//   - every command is read-only (as the policy classifies it), or a known
//     writer whose output operands resolve inside (touch, mkdir, rm, cp, mv,
//     ln, install, tee, dd of=, sort -o, sed -i and sed's w, find -delete
//     and -fprint, gawk -i inplace, chmod, chown, truncate, patch, unzip -d,
//     tar -C/-f, git, gofmt and a few go subcommands);
//   - the current directory is tracked through cd and pushd: after a cd
//     the command may be in the old or the new directory (cd can fail), and
//     relative paths must be inside from each;
//   - paths are resolved like the kernel would, following the symbolic
//     links that exist now; once a command may have created links (tar or
//     unzip extraction, cp -r, git checkout) later writes are not proven;
//   - git's own state (any path through a `.git` component, git config,
//     other refs) is outside: it is shared with the source repository and
//     holds hooks and configuration that run commands;
//   - nested execution (sh -c, eval, find -exec, awk system(), …) and any
//     unknown command are not proven.
//
// Toolchain caches: gofmt, go build, go vet, go fmt, go mod, go list and
// go get write their own caches ($GOCACHE, $GOMODCACHE) outside the
// workspace; those writes are treated as inside because the commands run no
// code from the workspace. Commands that do run workspace code (go test,
// go run, make, npm, cargo, pytest, any script) can write anywhere and are
// never proven; an allow rule or a sandbox is the way to run them.
//
// It reads the file system only to resolve symbolic links and never runs
// anything. An empty or relative workdir proves nothing.
func ShellStaysInside(cmd, workdir string, allowWrite []string) (bool, string) {
	if !filepath.IsAbs(workdir) {
		return false, "the workspace directory is unknown"
	}
	c := &insideCheck{}
	for _, root := range append([]string{workdir}, allowWrite...) {
		if !filepath.IsAbs(root) {
			continue
		}
		if r, err := resolvePath(root, "/"); err == nil {
			c.roots = append(c.roots, r)
		}
	}
	if len(c.roots) == 0 {
		return false, "the workspace directory cannot be resolved"
	}
	c.cwds = []string{c.roots[0]}
	p := parserPool.Get().(*syntax.Parser)
	file, err := p.Parse(strings.NewReader(cmd), "")
	parserPool.Put(p)
	if err != nil {
		return false, "the command could not be parsed"
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		if c.why != "" {
			return false
		}
		c.node(cmd, n)
		return c.why == ""
	})
	if c.why != "" {
		return false, c.why
	}
	return true, ""
}

// insideCheck is the state of one ShellStaysInside walk.
type insideCheck struct {
	roots      []string // resolved writable roots; the workspace first
	cwds       []string // every directory the command may be in by now
	cwdUnknown bool     // a cd went somewhere the analysis cannot name
	linked     string   // why symbolic links may exist that were not there before
	why        string   // the first reason the command is not proven inside
}

func (c *insideCheck) fail(why string) {
	if c.why == "" {
		c.why = why
	}
}

func (c *insideCheck) node(src string, n syntax.Node) {
	switch n := n.(type) {
	case *syntax.Stmt:
		for _, r := range n.Redirs {
			c.redirect(src, r)
		}
	case *syntax.CallExpr:
		c.call(src, n)
	case *syntax.ParamExp:
		c.fail("it uses a variable, whose value is only known at run time")
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
		c.fail("it evaluates arithmetic, which can run code hidden in strings")
	case *syntax.Assign, *syntax.DeclClause:
		c.fail("it sets variables")
	case *syntax.FuncDecl:
		c.fail("it defines a shell function")
	case *syntax.CoprocClause:
		c.fail("it starts a coprocess")
	case *syntax.TestClause:
		c.fail("`[[ … ]]` may evaluate strings as arithmetic")
	case *syntax.ExtGlob, *syntax.BraceExp:
		c.fail("it uses a pattern expanded at run time")
	}
}

// redirect checks one redirection: writes must land inside.
func (c *insideCheck) redirect(src string, r *syntax.Redirect) {
	if r.N != nil && strings.Trim(r.N.Value, "0123456789") != "" {
		c.fail("it opens a file descriptor named by a variable")
		return
	}
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return // reads
	case syntax.DplIn, syntax.DplOut:
		// `>&2`, `2>&1`, `>&-` duplicate or close; `>& file` writes a file.
		if v := strings.TrimSuffix(r.Word.Lit(), "-"); r.Word.Lit() == "-" || v != "" && strings.Trim(v, "0123456789") == "" {
			return // `>&-` closes, `>&3-` moves
		}
		if r.Op == syntax.DplIn {
			c.fail("it duplicates a file descriptor named at run time")
			return
		}
	}
	if r.Word == nil {
		c.fail("a redirect has no target")
		return
	}
	p, ok := wordValue(src, r.Word)
	if !ok || strings.HasPrefix(p, "~") {
		c.fail("a redirect writes to a path only known at run time")
		return
	}
	c.write(p, "a redirect writes to "+p)
}

// devSinks are device files writing to which changes nothing on disk.
var devSinks = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/zero": true}

// write requires that p, from every possible current directory, resolves
// inside a writable root and outside git's own state.
func (c *insideCheck) write(p, what string) {
	if p == "" {
		c.fail(what + ": an empty path")
		return
	}
	if devSinks[p] || strings.HasPrefix(p, "/dev/fd/") && strings.Trim(p[len("/dev/fd/"):], "0123456789") == "" {
		return
	}
	if c.linked != "" {
		c.fail(what + " after " + c.linked + ", which may have created symbolic links leading outside")
		return
	}
	bases := c.cwds
	if filepath.IsAbs(p) {
		bases = []string{"/"}
	} else if c.cwdUnknown {
		c.fail(what + " relative to a directory only known at run time")
		return
	}
	for _, base := range bases {
		r, err := resolvePath(p, base)
		if err != nil {
			c.fail(what + ", which cannot be resolved")
			return
		}
		if gitState(r) {
			c.fail(what + ", which is git's own state (shared with the source repository)")
			return
		}
		if !c.insideRoots(r) {
			c.fail(what + ", which is outside the workspace")
			return
		}
	}
}

func (c *insideCheck) insideRoots(r string) bool {
	for _, root := range c.roots {
		if within(r, root) {
			return true
		}
	}
	return false
}

// gitState reports a path inside (or naming) a .git directory or file.
func gitState(p string) bool {
	for _, seg := range splitPath(p) {
		if strings.EqualFold(seg, ".git") { // case-insensitive file systems
			return true
		}
	}
	return false
}

// cd follows a change of directory; the old directory stays possible
// because cd may fail and the script go on.
func (c *insideCheck) cd(args []string) {
	var dir string
	for _, a := range args {
		if a == "-L" || a == "-P" || a == "-e" || a == "-@" || a == "--" {
			continue
		}
		dir = a
		break
	}
	if dir == "" || dir == "-" || strings.HasPrefix(dir, "~") {
		c.cwdUnknown = true // $HOME or $OLDPWD
		return
	}
	if os.Getenv("CDPATH") != "" && !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") && dir != "." && dir != ".." {
		c.cwdUnknown = true // the shell, inheriting CDPATH, may look elsewhere first
		return
	}
	var next []string
	bases := c.cwds
	if filepath.IsAbs(dir) {
		bases = []string{"/"}
	}
	for _, base := range bases {
		r, err := resolvePath(dir, base)
		if err != nil {
			c.cwdUnknown = true
			return
		}
		next = append(next, r)
	}
	for _, r := range next {
		if !containsString(c.cwds, r) {
			c.cwds = append(c.cwds, r)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// argsFreeOfEffects are commands whose arguments, even computed ones,
// cannot make them write or run anything.
var argsFreeOfEffects = map[string]bool{
	"echo": true, "ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true,
	"fgrep": true, "pwd": true, "true": true, "false": true, "basename": true, "dirname": true, ":": true,
}

// insideReaders are harmless commands the policy's read-only list does not
// name (it serves rules, this serves confinement).
var insideReaders = map[string]bool{
	":": true, "exit": true, "wait": true, "sleep": true, "seq": true, "tr": true, "cut": true, "jq": true,
	"sha512sum": true, "b2sum": true, "popd": true, "dirs": true, "date": true,
}

// call checks one simple command.
func (c *insideCheck) call(src string, ce *syntax.CallExpr) {
	if len(ce.Assigns) > 0 {
		c.fail("it sets variables for a command")
		return
	}
	if len(ce.Args) == 0 {
		return
	}
	words := make([]string, len(ce.Args))
	lit := make([]bool, len(ce.Args))
	for i, w := range ce.Args {
		words[i], lit[i] = wordValue(src, w)
	}
	if !lit[0] {
		c.fail("the command name is only known at run time")
		return
	}
	start, elevated, assigns, why := unwrap(words, lit)
	switch {
	case elevated:
		c.fail("it runs a command as another user")
		return
	case why != "":
		c.fail(why)
		return
	case assigns:
		c.fail("it sets variables for a command")
		return
	}
	for _, w := range words[:start] {
		if w == "-C" || strings.HasPrefix(w, "--ch") || len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsRune(w, 'C') {
			c.fail("`env -C` runs the command in another directory")
			return
		}
	}
	if start >= len(words) {
		return // a wrapper alone only reports
	}
	w, l := words[start:], lit[start:]
	name := baseName(w[0])
	if !l[0] {
		c.fail("the command name is only known at run time")
		return
	}
	if !allLit(l) && !argsFreeOfEffects[name] {
		c.fail("an argument of `" + name + "` is only known at run time")
		return
	}
	if strings.Contains(w[0], "/") && !systemCommand(w[0]) {
		c.fail("it runs the program " + w[0] + ", which may do anything")
		return
	}
	cls := classify(w, l)
	switch {
	case cls.nested != "":
		c.fail(cls.nested)
		return
	case name == "cd" || name == "pushd":
		c.cd(w[1:])
		return
	case name == "set":
		// Only the usual strictness and tracing options; other options
		// (history, positional parameters) have effects of their own.
		for _, a := range w[1:] {
			flags := len(a) > 1 && (a[0] == '-' || a[0] == '+') && strings.Trim(a[1:], "euxvoCf") == ""
			if !flags && a != "pipefail" && a != "errexit" && a != "nounset" && a != "xtrace" && a != "noclobber" {
				c.fail("`set " + a + "` is not known to be harmless")
				return
			}
		}
		return
	case name == "exec" && len(w) == 1:
		return // only redirects, checked on the statement
	case cls.readOnly || insideReaders[name]:
		return
	}
	c.writer(name, w[1:])
}
