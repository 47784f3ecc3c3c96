package policy

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ExecDenied matches one executed program against the Bash deny rules, as
// exec-time enforcement sees it: name is the canonical command name (the
// base name, or the command a copied or linked binary was identified as;
// see ExecName) and argv the exec's argument vector, whose argv[0] name
// replaces. The
// words are matched as the analyser matches a simple command of plain
// words: `Bash(prefix:*)`, `Bash(words)`, `Bash(prefix*)` and `Bash=exact`
// rules, through wrappers (env, timeout, nice, …), git's global options,
// the command strings of `sh -c` and the commands that delete like rm
// (unlink, shred -u, find -delete, git rm). Quoting plays no part: argv is
// already split. Rules for other tools and the bare `Bash` rule never match
// an exec. It returns the matching rule in canonical form.
//
// It reads no file and is safe for concurrent use; a nil Policy denies
// nothing.
func (p *Policy) ExecDenied(name string, argv []string) (rule string, denied bool) {
	if p == nil || !p.deny.hasBashWords() {
		return "", false
	}
	words := make([]string, 0, max(len(argv), 1))
	switch {
	case name != "":
		words = append(words, name)
	case len(argv) > 0 && argv[0] != "":
		words = append(words, path.Base(argv[0]))
	default:
		return "", false
	}
	if multiCall[words[0]] && len(argv) > 0 && path.Base(argv[0]) != words[0] && argv[0] != "" {
		// A multi-call binary runs the program argv[0] names.
		words[0] = path.Base(argv[0])
	}
	if len(argv) > 1 {
		words = append(words, argv[1:]...)
	}
	if words[0] == "" {
		return "", false
	}
	lit := make([]bool, len(words))
	for i := range lit {
		lit[i] = true
	}
	f := &shellFacts{}
	a := analyzer{facts: f}
	a.command(words, lit, 0, true)
	f.finish()
	if i := p.deny.matchFacts(f); i >= 0 {
		return p.deny.rules[i].String(), true
	}
	return "", false
}

// DeniedCommands returns the command names Bash deny rules name, sorted:
// the first word of every prefix, word and exact rule (a path reduced to
// its base name), and the commands the analyser counts as running one of
// them (unlink, shred, rmdir, mv, find, git, tar and zip delete like rm). Exec-time
// enforcement fingerprints the system binaries of these names to know a
// copy of one by its content.
func (p *Policy) DeniedCommands() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, r := range p.deny.rules {
		if r.family != familyBash {
			continue
		}
		switch r.kind {
		case kindPrefix, kindRawPrefix, kindWords:
			out = append(out, path.Base(r.words[0]))
		case kindExact:
			if ws := strings.Fields(r.spec); len(ws) > 0 {
				out = append(out, path.Base(strings.Trim(ws[0], `'"\`)))
			}
		}
	}
	if slices.Contains(out, "rm") {
		out = append(out, rmLike...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rmLike are the commands deleterAlso, gitAlso and classifyFind count as rm.
var rmLike = []string{"unlink", "shred", "rmdir", "mv", "find", "git", "tar", "zip"}

// multiCall are binaries that run the program their argv[0] names, so
// the same file is rm, ls and sh.
var multiCall = map[string]bool{"busybox": true, "toybox": true, "coreutils": true}

// ExecName returns the canonical command name of an executed file, for
// ExecDenied: a symbolic link is resolved, and a regular file identical in
// content to the system binary of a command DeniedCommands lists (a copy
// of rm named y) is named after that command; any other file by its base
// name. Where the denied command is a multi-call binary (busybox,
// coreutils), the file is named after that binary, and ExecDenied takes
// the program from argv[0] as the binary does. It reads the file only when its size matches such a binary. It is
// safe for concurrent use; a nil Policy names every file by its base name.
func (p *Policy) ExecName(file string) string {
	name := filepath.Base(file)
	if p == nil || !p.deny.hasBashWords() {
		return name
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return name
	}
	denied := p.DeniedCommands()
	if b := filepath.Base(real); slices.Contains(denied, b) {
		return b
	}
	info, err := os.Stat(real)
	if err != nil || !info.Mode().IsRegular() {
		return name
	}
	if id := identifyBinary(real, info.Size(), denied); id != "" {
		return id
	}
	return name
}
