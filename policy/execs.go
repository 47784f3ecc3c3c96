package policy

import "strings"

// This file lists commands that execute other commands. Every such command
// is nested execution: a prefix grant cannot vouch for what it runs, so it
// needs a person (or yolo, or an identical Bash= grant).

// classifyIndirect handles the commands of alwaysIndirect: it finds the
// command string they run, so deny rules can look into it, and says when
// that command is only known at run time.
func classifyIndirect(name, why string, args []string, lit []bool) commandClass {
	c := commandClass{nested: why}
	unknown := "`" + name + "` runs a command only known at run time"
	switch name {
	case "eval":
		if allLit(lit) {
			c.script = strings.Join(args, " ")
		} else {
			c.dynName = unknown
		}
	case "xargs":
		c.dynName = xargsUnseen(args, lit)
		c.runsArgs = true
	case "parallel":
		c.dynName = "`parallel` builds the commands it runs from its input"
	case "watch", "su", "trap", "flock":
		script, ok := commandString(name, args, lit)
		switch {
		case ok:
			c.script = script
		case !allLit(lit):
			c.dynName = unknown
		case name == "flock":
			c.runsArgs = true // flock FILE COMMAND ARGS…
		case name == "su":
			c.opaque = "`su` starts a shell reading commands"
		}
	case "source", ".":
		if len(args) > 0 && lit[0] {
			c.scriptFile = args[0]
		} else {
			c.dynName = unknown
		}
	case "alias":
		// An alias's value runs in place of its name once aliases expand
		// (shopt -s expand_aliases); deny rules read it as a command.
		for i, a := range args {
			if !lit[i] {
				c.dynName = unknown
				continue
			}
			if _, v, ok := strings.Cut(a, "="); ok {
				c.scripts = append(c.scripts, v)
			}
		}
	case "exec", "busybox":
		c.runsArgs = true
		if !allLit(lit) {
			c.dynName = unknown
		}
	default:
		c.opaque = why
		if !allLit(lit) {
			c.dynName = unknown
		}
	}
	return c
}

// argvRunners run the command line given as their arguments, which the
// analyser reads (analyzer.tails); the other runners execute commands of
// their own language or input, which it cannot read.
var argvRunners = map[string]bool{
	"strace": true, "ltrace": true, "valgrind": true, "chroot": true, "unshare": true, "nsenter": true,
	"setpriv": true, "taskset": true, "chrt": true, "prlimit": true, "unbuffer": true, "firejail": true,
	"systemd-run": true, "pkexec": true, "sshpass": true, "fakeroot": true, "fakechroot": true, "eatmydata": true,
	"faketime": true, "catchsegv": true, "nocache": true, "xvfb-run": true, "dbus-run-session": true,
	"torsocks": true, "proxychains": true, "proxychains4": true, "chronic": true, "ifne": true, "setarch": true,
	"linux32": true, "linux64": true, "numactl": true, "cgexec": true, "bwrap": true,
}

// commandString returns the literal command string watch, su -c, trap or
// flock -c runs; ok is false when there is none or it is not literal.
func commandString(name string, args []string, lit []bool) (string, bool) {
	switch name {
	case "su", "flock":
		for i, a := range args {
			if (a == "-c" || a == "--command") && i+1 < len(args) {
				return args[i+1], lit[i+1]
			}
		}
	case "trap":
		for i, a := range args {
			if a == "--" || strings.HasPrefix(a, "-") && a != "-" {
				continue
			}
			return a, lit[i]
		}
	case "watch":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i], "-") {
			if args[i] == "-n" || args[i] == "--interval" || args[i] == "-q" {
				i++
			}
			i++
		}
		if i < len(args) && allLit(lit[i:]) {
			return strings.Join(args[i:], " "), true
		}
	}
	return "", false
}

// xargsUnseen reports when the command xargs runs is not a literal word:
// a computed name, or the input itself via the -I replacement string.
func xargsUnseen(args []string, lit []bool) string {
	replace := ""
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !lit[i] {
			return "`xargs` runs a command only known at run time"
		}
		switch {
		case a == "--":
			i++
		case !strings.HasPrefix(a, "-") || a == "-":
		case a == "-I":
			if i+1 < len(args) {
				replace = args[i+1]
			}
			i++
			continue
		case strings.HasPrefix(a, "-I"):
			replace = a[2:]
			continue
		case a == "-i" || a == "--replace":
			replace = "{}"
			continue
		case strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--replace="):
			_, replace, _ = strings.Cut(a, "=")
			if !strings.HasPrefix(a, "--") {
				replace = a[2:]
			}
			continue
		case len(a) == 2 && strings.IndexByte("LlnPsdEeaI", a[1]) >= 0:
			i++ // the value follows
			continue
		default:
			continue
		}
		break
	}
	if i >= len(args) {
		return "" // xargs runs echo
	}
	if !lit[i] || replace != "" && strings.Contains(args[i], replace) {
		return "`xargs` runs a command named by its input"
	}
	// `xargs env`, `xargs nice -n5`, `xargs strace`: a wrapper or runner
	// whose command is the input.
	if st, _, _, _ := unwrap(args[i:], lit[i:]); st >= len(args)-i {
		return "`xargs` runs a command named by its input"
	}
	name := baseName(args[i])
	if argvRunners[name] || name == "exec" || name == "busybox" || name == "xargs" {
		operand := false
		for _, a := range args[i+1:] {
			operand = operand || !strings.HasPrefix(a, "-")
		}
		if !operand {
			return "`xargs` runs a command named by its input"
		}
	}
	return ""
}

// runners execute the command line given to them as arguments, or open a
// program with a shell escape; the reason says which. An empty reason
// means only some options of the command run programs (see runsCommands).
var runners = map[string]string{
	"strace": "`strace` runs a command", "ltrace": "`ltrace` runs a command", "gdb": "`gdb` runs programs and commands",
	"valgrind": "`valgrind` runs a command", "chroot": "`chroot` runs a command", "unshare": "`unshare` runs a command",
	"nsenter": "`nsenter` runs a command", "setpriv": "`setpriv` runs a command", "runuser": "`runuser` runs a command",
	"sg": "`sg` runs a command", "taskset": "`taskset` runs a command", "chrt": "`chrt` runs a command",
	"prlimit": "`prlimit` runs a command", "unbuffer": "`unbuffer` runs a command", "firejail": "`firejail` runs a command",
	"systemd-run": "`systemd-run` runs a command", "script": "`script` runs a command", "expect": "`expect` runs commands",
	"pkexec": "`pkexec` runs a command", "sshpass": "`sshpass` runs a command", "tmux": "`tmux` runs commands",
	"screen": "`screen` runs commands", "at": "`at` runs commands later", "batch": "`batch` runs commands later",
	"less": "`less` can run shell commands", "more": "`more` can run shell commands", "most": "`most` can run shell commands",
	"vi": "the editor can run shell commands", "vim": "the editor can run shell commands", "nvim": "the editor can run shell commands",
	"view": "the editor can run shell commands", "ex": "the editor can run shell commands", "ed": "`ed` can run shell commands",
	"emacs": "the editor can run shell commands", "m4": "`m4` can run shell commands", "dc": "`dc` can run shell commands",
	"gnuplot": "`gnuplot` can run shell commands", "mapfile": "`mapfile -C` runs a callback", "readarray": "`readarray -C` runs a callback",
	"enable": "`enable -f` loads code into the shell", "complete": "`complete -C` runs a command", "bind": "`bind -x` runs a command",
	"fakeroot": "`fakeroot` runs a command", "fakechroot": "`fakechroot` runs a command", "eatmydata": "`eatmydata` runs a command",
	"faketime": "`faketime` runs a command", "catchsegv": "`catchsegv` runs a command", "nocache": "`nocache` runs a command",
	"xvfb-run": "`xvfb-run` runs a command", "dbus-run-session": "`dbus-run-session` runs a command", "torsocks": "`torsocks` runs a command",
	"proxychains": "`proxychains` runs a command", "proxychains4": "`proxychains4` runs a command", "chronic": "`chronic` runs a command",
	"ifne": "`ifne` runs a command", "setarch": "`setarch` runs a command", "linux32": "`linux32` runs a command",
	"linux64": "`linux64` runs a command", "numactl": "`numactl` runs a command", "cgexec": "`cgexec` runs a command",
	"bwrap": "`bwrap` runs a command", "go": "", "zip": "", "man": "", "rsync": "", "ssh": "", "scp": "", "sftp": "",
	"git": "", "sqlite3": "", "psql": "", "mysql": "",
}

// runsCommands reports commands that execute others, beyond the shells,
// interpreters and alwaysIndirect: the runners, and the options by which
// ordinary tools start programs.
func runsCommands(name string, args []string) (string, bool) {
	why, ok := runners[name]
	if !ok {
		return "", false
	}
	switch name {
	case "mapfile", "readarray", "complete":
		return why, hasFlagLetter(args, 'C')
	case "enable":
		return why, hasFlagLetter(args, 'f')
	case "bind":
		return why, hasFlagLetter(args, 'x')
	case "go":
		for _, a := range args {
			if a == "-toolexec" || strings.HasPrefix(a, "-toolexec=") || a == "--toolexec" || strings.HasPrefix(a, "--toolexec=") ||
				a == "-vettool" || strings.HasPrefix(a, "-vettool=") || a == "-exec" || strings.HasPrefix(a, "-exec=") {
				return "the go option " + a + " runs a program", true
			}
		}
		if len(args) > 0 && args[0] == "generate" {
			return "`go generate` runs the commands named in the source", true
		}
	case "zip":
		for _, a := range args {
			if a == "-TT" || a == "--unzip-command" || strings.HasPrefix(a, "--unzip-command=") {
				return "`zip " + a + "` runs a command", true
			}
		}
	case "man":
		for _, a := range args {
			if a == "-P" || strings.HasPrefix(a, "--pager") || a == "-H" || strings.HasPrefix(a, "--html") {
				return "`man " + a + "` runs a program", true
			}
		}
	case "rsync":
		for _, a := range args {
			if a == "-e" || hasLong([]string{a}, "--rsh") || hasLong([]string{a}, "--rsync-path") {
				return "`rsync " + a + "` runs a program", true
			}
		}
		return sshCommandOption(name, args)
	case "ssh", "scp", "sftp":
		for _, a := range args {
			if name != "ssh" && a == "-S" {
				return "`" + name + " -S` runs a program", true
			}
		}
		return sshCommandOption(name, args)
	case "sqlite3", "psql", "mysql":
		for _, a := range args {
			if strings.Contains(a, ".shell") || strings.Contains(a, ".system") || strings.Contains(a, `\!`) || strings.Contains(a, "system ") {
				return "the `" + name + "` command line runs shell commands", true
			}
		}
	case "git":
		if why := gitRuns(args); why != "" {
			return why, true
		}
	default:
		return why, true
	}
	return "", false
}

// sshCommandOption spots ssh options that run a local command.
func sshCommandOption(name string, args []string) (string, bool) {
	for _, a := range args {
		l := strings.ToLower(a)
		if strings.Contains(l, "proxycommand") || strings.Contains(l, "localcommand") || strings.Contains(l, "knownhostscommand") {
			return "the `" + name + "` option " + a + " runs a local command", true
		}
	}
	return "", false
}

// gitRuns spots git subcommands and options that run programs beyond the
// global -c and --exec options classifyGit already knows.
func gitRuns(args []string) string {
	norm, ok := stripGitGlobals(append([]string{"git"}, args...))
	if !ok {
		norm = append([]string{"git"}, args...)
	}
	if len(norm) < 2 {
		return ""
	}
	sub, rest := norm[1], norm[2:]
	switch sub {
	case "grep":
		for _, a := range rest {
			if a == "--" {
				break
			}
			if hasLong([]string{a}, "--open-files-in-pager") || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'O') {
				return "`git grep -O` opens the matches in a program"
			}
		}
	case "difftool", "mergetool", "instaweb", "web--browse":
		return "`git " + sub + "` runs an external program"
	case "rebase":
		if hasLong(rest, "--exec") {
			return "`git rebase --exec` runs a command"
		}
	}
	return ""
}

// tarRuns spots the tar options that start programs. Long options may be
// abbreviated, so any prefix of a dangerous option counts.
func tarRuns(args []string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "--"):
			for _, o := range []string{"--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"} {
				if hasLong([]string{a}, o) {
					return "`tar " + o + "` runs a program"
				}
			}
			if hasLong([]string{a}, "--checkpoint-action") && strings.Contains(a, "exec") {
				return "`tar --checkpoint-action=exec` runs a command"
			}
			if hasLong([]string{a}, "--checkpoint-action") && !strings.Contains(a, "=") && i+1 < len(args) && strings.Contains(args[i+1], "exec") {
				return "`tar --checkpoint-action=exec` runs a command"
			}
		case strings.HasPrefix(a, "-") || i == 0:
			// A bundle of short options; the traditional first argument
			// needs no dash. -I and -F name programs.
			if strings.ContainsAny(a, "IF") {
				return "`tar -I`/`-F` runs a program"
			}
		}
	}
	return ""
}

// hasLong reports a long option in args, also abbreviated (as getopt and
// git accept) to at least two letters after the dashes, with or without
// an attached value.
func hasLong(args []string, long string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		n, _, _ := strings.Cut(a, "=")
		if len(n) >= 4 && strings.HasPrefix(long, n) {
			return true
		}
	}
	return false
}

// hasFlagLetter reports a short option letter, alone or in a bundle.
func hasFlagLetter(args []string, letter byte) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], letter) >= 0 {
			return true
		}
	}
	return false
}
