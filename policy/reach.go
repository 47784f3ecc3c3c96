package policy

import (
	"strings"
)

// This file lists what lets a command reach another one that deny rules
// cannot read: variables naming commands, git configuration naming
// commands, git aliases, and the commands that delete files as rm does.

// commandVar returns why setting the environment or shell variable name
// (to value, when known: hasValue) runs code deny rules cannot read, or ""
// when it does not.
func commandVar(name, value string, hasValue bool) string {
	switch name {
	case "PATH":
		if hasValue && systemSearchPath(value) {
			return ""
		}
		return "it changes PATH, so which file a command name runs is not known"
	case "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS4", "SHELLOPTS", "BASHOPTS", "BASH_LOADABLES_PATH":
		return "the variable " + name + " makes bash run code"
	case "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF",
		"GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR", "GIT_TEMPLATE_DIR":
		return "the variable " + name + " makes git run a command or read configuration naming one"
	case "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER":
		return "the variable " + name + " names a command programs run"
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PERL5OPT", "PERL5LIB", "RUBYOPT", "NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH":
		return "the variable " + name + " loads code into the programs that run"
	}
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return "the variable " + name + " configures git, which may name commands"
	}
	if strings.HasPrefix(name, "BASH_FUNC_") {
		return "the variable " + name + " defines a shell function"
	}
	return ""
}

// systemSearchPath reports a PATH value whose directories are all the
// current PATH or directories a task cannot write under the sandbox
// (/usr/local/go/bin, /opt/…): `PATH=$PATH:/usr/local/go/bin go build`
// finds no planted copy of a denied command.
func systemSearchPath(value string) bool {
	value = strings.Trim(value, `"'`)
	if value == "" {
		return false
	}
	for _, dir := range strings.Split(value, ":") {
		switch {
		case dir == "$PATH" || dir == "${PATH}":
		case strings.ContainsAny(dir, "$`\\*?[~") || strings.Contains(dir, ".."):
			return false
		case dir == "/bin" || dir == "/sbin" || strings.HasPrefix(dir, "/usr/") || strings.HasPrefix(dir, "/opt/") ||
			strings.HasPrefix(dir, "/snap/") || strings.HasPrefix(dir, "/nix/store/"):
		default:
			return false
		}
	}
	return true
}

// setsVars are the commands whose bare-word arguments are variable names
// they set (`read GIT_SSH_COMMAND`); declarations (export, declare) are
// assignments the parser already shows.
var setsVars = map[string]bool{"read": true, "mapfile": true, "readarray": true, "printf": true, "getopts": true}

// gitSafeConfig are the configuration sections and keys that name no
// command. `git config` setting any other key (alias.*, core.sshCommand,
// core.fsmonitor, core.pager, filter.*, diff.*.textconv, include.path, …)
// configures a command git runs later, which no deny rule sees.
var gitSafeConfig = map[string]bool{
	"user": true, "color": true, "advice": true, "init": true, "pull": true, "push": true, "log": true,
	"status": true, "fetch": true, "rerere": true, "i18n": true, "column": true, "branch": true, "gc": true,
	"pack": true, "index": true, "feature": true, "safe": true, "checkout": true, "clone": true, "format": true,
	"core.autocrlf": true, "core.eol": true, "core.filemode": true, "core.ignorecase": true, "core.quotepath": true,
	"core.whitespace": true, "core.safecrlf": true, "core.symlinks": true, "core.abbrev": true,
	"core.compression": true, "core.precomposeunicode": true, "core.logallrefupdates": true,
	"core.bare": true, "core.repositoryformatversion": true,
	"merge.conflictstyle": true, "merge.ff": true, "rebase.autosquash": true, "rebase.autostash": true,
	"diff.renames": true, "diff.algorithm": true, "diff.noprefix": true, "diff.mnemonicprefix": true,
	"diff.colormoved": true, "diff.context": true,
}

// gitConfigRuns reports `git config` setting a key that may name a command.
func gitConfigRuns(args []string) string {
	var ops []string
	set := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--add" || a == "--replace-all" || a == "--append" || a == "set":
			set = true
		case a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" || a == "--comment" || a == "--value":
			i++
		case a == "--unset" || a == "--unset-all" || a == "unset" || a == "--remove-section" || a == "--rename-section" ||
			a == "-e" || a == "--edit" || a == "edit":
			if a == "-e" || a == "--edit" || a == "edit" {
				return "`git config --edit` opens an editor on git's configuration"
			}
			return ""
		case a == "get" || a == "list" || a == "--get" || a == "--get-all" || a == "--get-regexp" || a == "-l" || a == "--list":
			return ""
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) == 0 || len(ops) == 1 && !set {
		return "" // reads a key
	}
	key := strings.ToLower(ops[0])
	if gitSafeConfig[key] {
		return ""
	}
	if section, _, ok := strings.Cut(key, "."); ok && gitSafeConfig[section] {
		return ""
	}
	return "`git config " + ops[0] + "` configures a command git may run later"
}

// gitCommands are git's own subcommands; any other one may be an alias,
// which runs whatever the configuration says.
var gitCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`add am annotate apply archive bisect blame branch bugreport bundle cat-file
		check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool
		clean clone column commit commit-graph commit-tree config count-objects credential describe diagnose diff
		diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch
		fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep gui
		hash-object help hook index-pack init init-db instaweb interpret-trailers log ls-files ls-remote ls-tree
		mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mergetool mktag mktree
		multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed pull
		push range-diff read-tree rebase reflog remote repack replace replay request-pull rerere reset restore
		rev-list rev-parse revert rm send-email send-pack shortlog show show-branch show-index show-ref
		sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file
		unpack-objects update-index update-ref update-server-info var verify-commit verify-pack verify-tag
		version whatchanged worktree write-tree lfs`) {
		gitCommands[c] = true
	}
}

// deleterAlso returns what a command that deletes files is equivalent to
// for deny rules written for rm: unlink, shred -u, rmdir, mv to
// /dev/null, tar --remove-files and zip -m delete as rm does (git rm and
// git clean: gitAlso).
func deleterAlso(name string, args []string) [][]string {
	rm := func(flags []string, ops []string) [][]string {
		return [][]string{append(append([]string{"rm"}, flags...), ops...)}
	}
	switch name {
	case "unlink":
		return rm(nil, args)
	case "rmdir":
		return rm([]string{"-d"}, splitArgs(args, "").ops)
	case "shred":
		c := splitArgs(args, "nsx", "--iterations", "--size", "--random-source", "--remove")
		if c.has("-u", "--remove") {
			return rm([]string{"-f"}, c.ops)
		}
	case "tar":
		// --remove-files deletes what it archived.
		c := splitArgs(args, "fCTbgHKLNVX", "--file", "--directory", "--files-from", "--exclude-from")
		if c.has("", "--remove-files") {
			return rm([]string{"-rf"}, c.ops)
		}
	case "zip":
		// -m moves the files into the archive: they are deleted.
		c := splitArgs(args, "bntxi", "--temp-path", "--exclude", "--include")
		if c.has("-m", "--move") && len(c.ops) > 1 {
			return rm([]string{"-rf"}, c.ops[1:])
		}
	case "mv":
		c := splitArgs(args, "tS", "--target-directory", "--suffix")
		if t := c.values("-t", "--target-directory"); len(t) > 0 && t[len(t)-1] == "/dev/null" {
			return rm([]string{"-f"}, c.ops)
		}
		if n := len(c.ops); n > 1 && c.ops[n-1] == "/dev/null" {
			return rm([]string{"-f"}, c.ops[:n-1])
		}
	}
	return nil
}

// gitAlso returns what git rm and git clean are for rm deny rules.
func gitAlso(sub string, rest []string) [][]string {
	switch sub {
	case "rm":
		return [][]string{append([]string{"rm"}, rest...)}
	case "clean":
		c := splitArgs(rest, "eX", "--exclude")
		ops := c.ops
		if len(ops) == 0 {
			ops = []string{"."}
		}
		return [][]string{append([]string{"rm", "-rf"}, ops...), append([]string{"rm", "-r", "-f"}, ops...)}
	}
	return nil
}

// runsCode reports the command names that may run another command, so the
// arguments of xargs, find -exec and runners that start with one are
// analysed as a command of their own.
func runsCode(name string) bool {
	if shells[name] || moreInterpreters[name] || isAwk(name) || strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy") {
		return true
	}
	if _, ok := alwaysIndirect[name]; ok {
		return true
	}
	if _, ok := runners[name]; ok {
		return true
	}
	if n, _ := wrapperArgs(name, nil, nil); n >= 0 {
		return true
	}
	switch name {
	case "node", "nodejs", "ruby", "perl", "php", "lua", "luajit", "Rscript", "deno", "bun", "sed", "tar", "find",
		"rg", "sort", "unlink", "rmdir", "shred", "mv", "hash", "alias", "zip":
		return true
	}
	return false
}

// xargsReplace returns the replacement string of xargs -I/-i/--replace,
// or "" (args are xargs's arguments; other commands have none).
func xargsReplace(args []string) string {
	for i, a := range args {
		switch {
		case !strings.HasPrefix(a, "-") || a == "--":
			return ""
		case a == "-I" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-I"):
			return a[2:]
		case a == "-i" || a == "--replace":
			return "{}"
		case strings.HasPrefix(a, "--replace="):
			return strings.TrimPrefix(a, "--replace=")
		case strings.HasPrefix(a, "-i"):
			return a[2:]
		}
	}
	return ""
}
