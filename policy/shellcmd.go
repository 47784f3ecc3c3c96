package policy

import (
	"path"
	"strings"
)

// unwrap skips transparent wrappers (nohup, timeout, nice, env, command,
// builtin, stdbuf, ionice, setsid, time, sudo, doas) and returns the index of the
// wrapped command. elevated is set under sudo/doas, whose command is never
// treated as read-only; assigns is set when env sets variables. A wrapper
// whose options cannot be proved returns a reason: the command it runs is
// then unknown.
func unwrap(words []string, lit []bool) (start int, elevated, assigns bool, why string) {
	for hops := 0; start < len(words) && hops < 8; hops++ {
		name := baseName(words[start])
		n, known := wrapperArgs(name, words[start+1:], lit[start+1:])
		if n < 0 {
			return start, elevated, assigns, ""
		}
		if !known {
			return start, elevated, assigns, "it is not clear which command `" + name + "` runs"
		}
		if name == "sudo" || name == "doas" {
			elevated = true
		}
		if name == "env" {
			for _, a := range words[start+1 : start+1+n] {
				if !strings.HasPrefix(a, "-") && strings.Contains(a, "=") {
					assigns = true // env NAME=value is an assignment too
				}
			}
		}
		start += 1 + n
	}
	return start, elevated, assigns, ""
}

// wrapperArgs returns how many of args belong to the wrapper name, or -1
// when name is not a wrapper. known is false when an option is not
// understood or not a literal.
func wrapperArgs(name string, args []string, lit []bool) (n int, known bool) {
	opts := func(withValue, flags string, long []string) (int, bool) {
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !lit[i] {
				return i, false
			}
			switch {
			case a == "--":
				return i + 1, true
			case !strings.HasPrefix(a, "-") || a == "-":
				return i, true
			case strings.HasPrefix(a, "--"):
				ok := false
				for _, l := range long {
					if a == l || strings.HasPrefix(a, l+"=") {
						ok = true
					}
				}
				if !ok {
					return i, false
				}
			case len(a) == 2 && strings.IndexByte(withValue, a[1]) >= 0:
				i++ // the value follows
			case strings.IndexByte(withValue, a[1]) >= 0:
				// -kVALUE
			case strings.Trim(a[1:], flags) == "":
			default:
				return i, false
			}
		}
		return len(args), true
	}
	switch name {
	case "nohup", "builtin":
		if len(args) > 0 && args[0] == "--" {
			return 1, true
		}
		return 0, true
	case "nice":
		for i, a := range args {
			if !lit[i] {
				return i, false
			}
			if len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "-0123456789") == "" {
				continue // nice -10
			}
			return opts("n", "", []string{"--adjustment"})
		}
		return len(args), true
	case "timeout":
		i, ok := opts("sk", "v", []string{"--signal", "--kill-after", "--preserve-status", "--foreground", "--verbose"})
		if !ok || i >= len(args) {
			return i, ok
		}
		return i + 1, lit[i] // the duration
	case "env":
		i, ok := opts("uC", "i0", []string{"--ignore-environment", "--unset", "--chdir", "--null"})
		if !ok {
			return i, false
		}
		for i < len(args) && lit[i] && strings.Contains(args[i], "=") && !strings.HasPrefix(args[i], "=") {
			i++ // NAME=value: an assignment, which makes the command dynamic
		}
		return i, true
	case "command":
		for _, a := range args {
			if a == "-v" || a == "-V" {
				return len(args), true // a lookup, nothing runs
			}
		}
		return opts("", "p", nil)
	case "stdbuf":
		return opts("ioe", "", []string{"--input", "--output", "--error"})
	case "ionice":
		return opts("cnpPu", "t", []string{"--class", "--classdata", "--pid", "--pgid", "--uid", "--ignore"})
	case "setsid":
		return opts("", "cfw", []string{"--ctty", "--fork", "--wait"})
	case "time":
		return opts("f", "pv", []string{"--portability", "--verbose", "--format"})
	case "sudo", "doas":
		return opts("ugC", "nEHkSb", []string{"--user", "--group", "--non-interactive", "--preserve-env"})
	}
	return -1, true
}

// commandClass is what a simple command is.
type commandClass struct {
	nested string // why it executes code indirectly
	// dynName says why a command it runs is only known at run time.
	dynName string
	// opaque says why code it runs cannot be read by deny rules (python -c,
	// awk's system(), git -c): nested execution the analyser does not see
	// into. Nested execution without it is seen: what it runs is parsed.
	opaque  string
	script  string   // a literal command string it runs (bash -c, eval), parsed again for deny rules
	scripts []string // further such strings (alias values)
	// runsArgs: it runs a command line given as its arguments (xargs,
	// find -exec, strace), which the analyser looks into (analyzer.tails).
	runsArgs bool
	// scriptFile is a script file a shell reads (bash s.sh, source s.sh).
	scriptFile string
	also       [][]string // commands it is equivalent to, for deny rules (find -delete is rm)
	readOnly   bool
}

// hidden is nested execution deny rules cannot see into.
func hidden(why string) commandClass { return commandClass{nested: why, opaque: why} }

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "fish": true, "rbash": true,
	"csh": true, "tcsh": true, "yash": true, "posh": true, "ksh93": true, "pdksh": true, "oksh": true, "loksh": true,
}

// foreignShells do not speak the language the parser reads: their command
// strings are not parsed, so deny rules cannot see into them.
var foreignShells = map[string]bool{"fish": true, "csh": true, "tcsh": true}

// moreInterpreters run inline code (-e, -c) or a program read from their
// input, like python and perl, and are known only for that.
var moreInterpreters = map[string]bool{
	"tclsh": true, "wish": true, "julia": true, "guile": true, "racket": true, "sbcl": true, "clisp": true,
	"irb": true, "ghci": true, "runghc": true, "scala": true, "groovy": true, "jshell": true, "octave": true,
	"R": true, "elixir": true, "erl": true, "escript": true, "bb": true, "qjs": true, "ocaml": true,
	"swift": true, "kotlin": true, "osascript": true, "xonsh": true, "elvish": true, "nu": true,
}

// alwaysIndirect run commands given to them as arguments or read from files
// into the current shell.
var alwaysIndirect = map[string]string{
	"eval": "`eval` runs a string as shell code", "source": "`source` runs a script in the shell", ".": "`.` runs a script in the shell",
	"exec": "`exec` replaces the shell with another command", "xargs": "`xargs` runs commands built from its input",
	"parallel": "`parallel` runs commands built from its input", "watch": "`watch` runs a command string",
	"su": "`su` runs a command string", "trap": "`trap` runs a command string later", "alias": "`alias` defines commands",
	"busybox": "`busybox` runs another command", "pwsh": "a PowerShell command string", "powershell": "a PowerShell command string",
	"cmd": "a cmd.exe command string", "cmd.exe": "a cmd.exe command string", "flock": "`flock` runs a command",
}

// readers are commands that only read, whatever their arguments.
var readers = map[string]bool{
	"ls": true, "pwd": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true,
	"fgrep": true, "echo": true, "printf": true, "true": true, "false": true, "which": true, "whoami": true,
	"id": true, "uname": true, "stat": true, "du": true, "df": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "cmp": true, "diff": true, "sha256sum": true, "sha1sum": true,
	"md5sum": true, "nl": true, "printenv": true, "test": true, "[": true, "cd": true, "type": true, "rg": true,
}

var gitReaders = map[string]bool{"status": true, "log": true, "diff": true, "show": true, "blame": true, "ls-files": true, "rev-parse": true}

// classify looks at one unwrapped simple command.
func classify(w []string, lit []bool) commandClass {
	c := classifyName(w, lit)
	if also := deleterAlso(baseName(w[0]), w[1:]); also != nil {
		c.also = append(c.also, also...)
		c.readOnly = false
	}
	return c
}

func classifyName(w []string, lit []bool) commandClass {
	name := baseName(w[0])
	args := w[1:]
	if strings.Contains(w[0], "/") && !systemCommand(w[0]) {
		// ./cat is whatever the workspace put there, not cat; deny rules
		// still try the base name (wordRule, broad).
		return commandClass{}
	}
	if why, ok := alwaysIndirect[name]; ok {
		if name == "exec" && len(args) == 0 {
			return commandClass{} // `exec >file` only redirects
		}
		return classifyIndirect(name, why, args, lit[1:])
	}
	if why, ok := runsCommands(name, args); ok {
		if argvRunners[name] {
			return commandClass{nested: why, runsArgs: true}
		}
		return hidden(why)
	}
	switch {
	case shells[name]:
		return classifyShell(name, args, lit[1:])
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		return classifyInterpreter(name, args, "c", "WXm", "m")
	case name == "node" || name == "nodejs":
		return classifyInterpreter(name, args, "ep", "r", "")
	case name == "ruby" || name == "perl":
		return classifyInterpreter(name, args, "eE", "IrC", "")
	case name == "php":
		return classifyInterpreter(name, args, "rR", "dc", "")
	case name == "lua" || name == "luajit" || name == "Rscript":
		return classifyInterpreter(name, args, "e", "l", "")
	case moreInterpreters[name]:
		return classifyInterpreter(name, args, "ec", "", "")
	case name == "deno" && len(args) > 0 && args[0] == "eval", name == "bun" && hasAny(args, "-e", "--eval", "-p", "--print"):
		return hidden("`" + name + "` evaluates inline code")
	case name == "hash":
		// `hash -p /bin/rm x` makes x run rm.
		c := splitArgs(args, "p")
		if p := c.values("-p", ""); len(p) > 0 {
			c := commandClass{opaque: "`hash -p` makes a name run another file"}
			c.also = [][]string{{baseName(p[0])}}
			return c
		}
		return commandClass{}
	case name == "find":
		return classifyFind(args, lit[1:])
	case name == "git":
		return classifyGit(args)
	case name == "rg":
		for _, a := range args {
			if a == "--pre" || strings.HasPrefix(a, "--pre=") {
				return hidden("`rg --pre` runs a command on every file")
			}
		}
	case isAwk(name):
		if why := awkRuns(args); why != "" {
			return hidden(why)
		}
	case name == "sed":
		if why := sedRuns(args); why != "" {
			return hidden(why)
		}
	case name == "tar":
		if why := tarRuns(args); why != "" {
			return hidden(why)
		}
	case name == "sort":
		if hasLong(args, "--compress-program") {
			return hidden("`sort --compress-program` runs a program")
		}
		return commandClass{readOnly: !hasFlag(args, "-o", "--output")}
	case name == "test" || name == "[" || name == "printf":
		// `test -v` and `printf -v` evaluate a name, which may hold code.
		return commandClass{readOnly: !hasAny(args, "-v")}
	case name == "tree":
		return commandClass{readOnly: !hasFlag(args, "-o", "")}
	}
	return commandClass{readOnly: readers[name]}
}

func classifyShell(name string, args []string, lit []bool) commandClass {
	var c commandClass
	scripts := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		isOpt := len(a) > 1 && (a[0] == '-' || a[0] == '+') && !strings.HasPrefix(a, "--")
		switch {
		case a == "-" || a == "-s" || a == "-i":
			why := "`" + name + "` reads commands from its input"
			return commandClass{nested: why, dynName: why}
		case !lit[i] && scripts == 0:
			// bash <(…), bash "$F": a script nobody can read before it runs.
			why := "`" + name + "` runs a script only known at run time"
			return commandClass{nested: why, dynName: why}
		case isOpt && strings.ContainsRune(a[1:], 'c'):
			c := commandClass{nested: "`" + name + " -c` runs a command string"}
			if foreignShells[name] {
				c.opaque = c.nested
			}
			for j := i + 1; j < len(args); j++ {
				if !strings.HasPrefix(args[j], "-") {
					if lit[j] {
						c.script = args[j]
					}
					break
				}
			}
			if c.script == "" {
				c.dynName = "`" + name + " -c` runs a command string only known at run time"
			}
			return c
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			if scripts == 0 {
				c.scriptFile = a
			}
			scripts++
		}
	}
	if scripts == 0 {
		why := "`" + name + "` reads commands from its input"
		return commandClass{nested: why, dynName: why}
	}
	return c
}

// classifyInterpreter spots inline code (python -c, node -e, perl -e, …) and
// interpreters reading a program from standard input. inline lists the
// short flags carrying code, valued the short flags taking a value, stop
// the flags after which the remaining arguments belong to a module.
func classifyInterpreter(name string, args []string, inline, valued, stop string) commandClass {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-":
			return hidden("`" + name + "` reads a program from its input")
		case a == "--eval" || a == "--print" || strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print="):
			return hidden("`" + name + "` evaluates inline code")
		case a == "--version" || a == "-V" || a == "--help" || a == "-h" || a == "-v":
			return commandClass{}
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags := a[1:]
			for k := 0; k < len(flags); k++ {
				f := flags[k]
				if strings.IndexByte(inline, f) >= 0 {
					return hidden("`" + name + " -" + string(f) + "` evaluates inline code")
				}
				if strings.IndexByte(stop, f) >= 0 {
					return commandClass{}
				}
				if strings.IndexByte(valued, f) >= 0 {
					if k == len(flags)-1 {
						i++
					}
					break
				}
			}
		default:
			return commandClass{} // a program file
		}
	}
	return hidden("`" + name + "` reads a program from its input")
}

func classifyFind(args []string, lit []bool) commandClass {
	c := commandClass{readOnly: true}
	for i, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			if c.nested == "" {
				c.nested = "`find " + a + "` runs a command for every match"
				c.runsArgs = true
			}
			if i+1 >= len(args) || !lit[i+1] || strings.Contains(args[i+1], "{}") {
				c.dynName = "`find " + a + "` runs a command named only at run time"
			}
			c.readOnly = false
		case "-delete":
			// Deleting every match is what `rm -rf` does to the start
			// paths, so deny rules written for rm see it.
			starts := findStarts(args)
			for _, flags := range [][]string{{"-rf"}, {"-r", "-f"}, {"-fr"}} {
				c.also = append(c.also, append(append([]string{"rm"}, flags...), starts...))
			}
			c.readOnly = false
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			c.readOnly = false
		}
	}
	return c
}

// findStarts returns find's start paths: the operands before the
// expression, after the leading -H/-L/-P/-D/-O options; "." when none.
func findStarts(args []string) []string {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") && len(a) > 2:
			i++
			continue
		case a == "-D":
			i += 2
			continue
		}
		break
	}
	var out []string
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "," {
			break
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		out = []string{"."}
	}
	return out
}

func classifyGit(args []string) commandClass {
	for _, a := range args {
		switch {
		case a == "-c" || strings.HasPrefix(a, "--config-env") || strings.HasPrefix(a, "-c"):
			if a == "-c" || a == "--config-env" || strings.HasPrefix(a, "--config-env=") {
				return hidden("`git -c` can configure commands git runs")
			}
		case strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--receive-pack") || strings.HasPrefix(a, "--exec"):
			return hidden("the git option " + a + " runs a command")
		}
	}
	norm, ok := stripGitGlobals(append([]string{"git"}, args...))
	if !ok {
		norm = append([]string{"git"}, args...)
	}
	if len(norm) > 1 && !strings.HasPrefix(norm[1], "-") {
		sub, rest := norm[1], norm[2:]
		switch {
		case !gitCommands[sub]:
			return commandClass{opaque: "`git " + sub + "` is not a git command, so it may be an alias running anything"}
		case sub == "config":
			if why := gitConfigRuns(rest); why != "" {
				return commandClass{opaque: why}
			}
		case sub == "rm" || sub == "clean":
			return commandClass{also: gitAlso(sub, rest)}
		}
	}
	if len(args) > 0 {
		switch args[0] {
		case "bisect", "submodule", "filter-branch":
			if len(args) > 1 && (args[1] == "run" || args[1] == "foreach") || args[0] == "filter-branch" {
				return hidden("`git " + args[0] + "` runs a command")
			}
		case "rebase":
			if hasAny(args, "-x") {
				return hidden("`git rebase -x` runs a command")
			}
		}
	}
	if len(args) == 0 || !gitReaders[args[0]] {
		return commandClass{}
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "--output") || a == "--ext-diff" || a == "--textconv" {
			return commandClass{}
		}
	}
	return commandClass{readOnly: true}
}

func hasAny(args []string, want ...string) bool {
	for _, a := range args {
		for _, w := range want {
			if a == w {
				return true
			}
		}
	}
	return false
}

// hasFlag reports a short flag (alone or with its value attached) or a long flag.
func hasFlag(args []string, short, long string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, short) && !strings.HasPrefix(a, "--") || long != "" && (a == long || strings.HasPrefix(a, long+"=")) {
			return true
		}
	}
	return false
}

func allLit(lit []bool) bool {
	for _, l := range lit {
		if !l {
			return false
		}
	}
	return true
}

// gitGlobalOptions are git's options that come before the subcommand, with
// whether each takes a separate value.
var gitGlobalOptions = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--exec-path": false, "--config-env": true, "-p": false, "--paginate": false, "-P": false,
	"--no-pager": false, "--bare": false, "--no-replace-objects": false, "--literal-pathspecs": false,
	"--glob-pathspecs": false, "--noglob-pathspecs": false, "--icase-pathspecs": false,
	"--no-optional-locks": false, "--no-lazy-fetch": false,
}

// stripGitGlobals returns `git SUBCOMMAND ARGS...` for a git command that
// puts global options before its subcommand (`git -C . push`), so deny and
// ask rules written as `Bash(git push:*)` still see the push. ok is false
// when words is not git or has no such options.
func stripGitGlobals(words []string) ([]string, bool) {
	if len(words) < 2 || baseName(words[0]) != "git" {
		return nil, false
	}
	i := 1
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		opt, _, inline := strings.Cut(words[i], "=")
		takesValue, known := gitGlobalOptions[opt]
		if !known {
			break
		}
		i++
		if takesValue && !inline {
			i++
		}
	}
	if i == 1 || i >= len(words) {
		return nil, false
	}
	return append([]string{"git"}, words[i:]...), true
}

// systemDirs hold the commands the base name may stand for; a command
// named by any other path is a program of unknown behaviour.
var systemDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/sbin": true, "/opt/homebrew/bin": true,
}

func systemCommand(w string) bool { return systemDirs[path.Dir(w)] }
