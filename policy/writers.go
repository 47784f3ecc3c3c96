package policy

import (
	"path"
	"strings"
)

// This file knows where the common writers write, for ShellStaysInside.
// A command missing here is not proven to stay inside.

// cmdArgs is a GNU-style command line split into options and operands.
type cmdArgs struct {
	ops  []string
	opts []cmdOpt
}

type cmdOpt struct{ name, value string }

// splitArgs separates options from operands. valued lists the short
// options taking a value, longValued the long ones (abbreviations count).
// An unknown option that takes a value would leave its value among the
// operands, which only adds paths to check.
func splitArgs(args []string, valued string, longValued ...string) cmdArgs {
	var c cmdArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			c.ops = append(c.ops, args[i+1:]...)
			return c
		case a == "-" || !strings.HasPrefix(a, "-"):
			c.ops = append(c.ops, a)
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a, "=")
			for _, l := range longValued {
				if !has && hasLong([]string{name}, l) && i+1 < len(args) {
					i++
					val = args[i]
					break
				}
			}
			c.opts = append(c.opts, cmdOpt{name, val})
		default:
			for k := 1; k < len(a); k++ {
				if strings.IndexByte(valued, a[k]) < 0 {
					c.opts = append(c.opts, cmdOpt{"-" + a[k:k+1], ""})
					continue
				}
				v := a[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				c.opts = append(c.opts, cmdOpt{"-" + a[k:k+1], v})
				break
			}
		}
	}
	return c
}

// values returns the values of the options named short or long (long may
// be abbreviated on the command line).
func (c cmdArgs) values(short, long string) []string {
	var out []string
	for _, o := range c.opts {
		if short != "" && o.name == short || long != "" && strings.HasPrefix(o.name, "--") && hasLong([]string{o.name}, long) {
			out = append(out, o.value)
		}
	}
	return out
}

func (c cmdArgs) has(short, long string) bool { return len(c.values(short, long)) > 0 }

// writer checks a command that is not read-only.
func (c *insideCheck) writer(name string, args []string) {
	what := "`" + name + "` writes to "
	targets := func(paths ...string) {
		for _, p := range paths {
			c.write(p, what+p)
		}
	}
	switch name {
	case "touch":
		targets(splitArgs(args, "drt", "--date", "--reference").ops...)
	case "mkdir", "mkfifo":
		targets(splitArgs(args, "mZ", "--mode", "--context").ops...)
	case "rm", "unlink":
		targets(splitArgs(args, "").ops...)
	case "rmdir":
		a := splitArgs(args, "")
		for _, p := range a.ops {
			if (a.has("-p", "--parents")) && path.IsAbs(p) {
				c.fail("`rmdir -p` removes every parent of " + p)
				return
			}
		}
		targets(a.ops...)
	case "shred":
		targets(splitArgs(args, "ns", "--iterations", "--size", "--random-source").ops...)
	case "truncate":
		targets(splitArgs(args, "sr", "--size", "--reference").ops...)
	case "chmod", "chown", "chgrp":
		// The mode or owner is checked as a path too: harmless, and it
		// keeps `chmod -x file` (a mode that looks like an option) honest.
		a := splitArgs(args, "")
		if a.has("-L", "--dereference") || a.has("-H", "") {
			c.fail("`" + name + "` follows symbolic links while recursing")
			return
		}
		for _, o := range a.opts {
			if !strings.HasPrefix(o.name, "--") && strings.Trim(o.name[1:], "RcfvPh") != "" {
				a.ops = append(a.ops, o.name) // -x, -w: a mode
			}
		}
		targets(a.ops...)
	case "tee":
		targets(splitArgs(args, "").ops...)
	case "cp", "mv", "install", "ln":
		c.copyLike(name, args)
	case "dd":
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			switch {
			case !ok:
				c.fail("`dd` has an operand it does not understand: " + a)
			case k == "of":
				targets(v)
			}
		}
	case "sort":
		a := splitArgs(args, "oTkStz", "--output", "--temporary-directory", "--key", "--buffer-size", "--field-separator", "--files0-from", "--parallel", "--batch-size", "--random-source", "--sort")
		targets(a.values("-o", "--output")...)
		targets(a.values("-T", "--temporary-directory")...)
	case "sed":
		s := parseSed(args)
		if s.bad != "" {
			c.fail("`sed` has an option it does not know: " + s.bad)
			return
		}
		p := scanSed(strings.Join(s.scripts, "\n"))
		if !p.ok {
			c.fail("the sed program could not be read")
			return
		}
		targets(p.writes...)
		if s.inPlace {
			if strings.Contains(s.suffix, "/") {
				c.fail("`sed -i` writes its backup into another directory")
				return
			}
			targets(s.files...)
		}
	case "find":
		c.find(args)
	case "awk", "gawk", "mawk", "nawk":
		a := parseAwk(args)
		if a.outputs {
			c.fail("gawk writes a profile or dump file")
			return
		}
		if a.unseen != "" {
			c.fail(a.unseen)
			return
		}
		for _, p := range a.progs {
			if scanAwk(p).redirects {
				c.fail("the awk program redirects output to a file")
				return
			}
		}
		if a.inPlace {
			targets(a.files...)
		}
	case "patch":
		a := splitArgs(args, "pdoriBDFVYzg", "--strip", "--directory", "--output", "--reject-file", "--input", "--prefix",
			"--ifdef", "--fuzz", "--version-control", "--basename-prefix", "--suffix", "--get", "--backup-if-mismatch")
		for _, o := range a.opts {
			switch o.name {
			case "-p", "-i", "-F", "-s", "-N", "-R", "-E", "-t", "-f", "-u", "-c", "-n", "-l", "-b", "-o", "-r":
			default:
				if !hasLong([]string{o.name}, "--strip") && !hasLong([]string{o.name}, "--input") && !hasLong([]string{o.name}, "--output") &&
					!hasLong([]string{o.name}, "--reject-file") && !hasLong([]string{o.name}, "--forward") && !hasLong([]string{o.name}, "--silent") &&
					!hasLong([]string{o.name}, "--quiet") && !hasLong([]string{o.name}, "--dry-run") && !hasLong([]string{o.name}, "--reverse") &&
					!hasLong([]string{o.name}, "--fuzz") && !hasLong([]string{o.name}, "--batch") && !hasLong([]string{o.name}, "--no-backup-if-mismatch") {
					c.fail("`patch " + o.name + "` is not known to stay inside")
					return
				}
			}
		}
		if len(a.ops) == 0 {
			c.fail("`patch` writes the files the patch names")
			return
		}
		targets(a.ops[0])
		targets(a.values("-o", "--output")...)
		targets(a.values("-r", "--reject-file")...)
	case "unzip":
		a := splitArgs(args, "dx")
		for _, o := range a.opts {
			switch o.name {
			case "-l", "-t", "-v", "-Z", "-p", "-c", "-z":
				return // lists, tests or prints
			case "-:", "-^":
				c.fail("`unzip " + o.name + "` may write outside the target directory")
				return
			}
		}
		dirs := a.values("-d", "")
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		for _, d := range dirs {
			c.fillable(d, "`unzip` extracts into "+d)
		}
		c.linked = "`unzip`"
	case "tar":
		c.tar(args)
	case "git":
		c.git(args)
	case "gofmt":
		a := splitArgs(args, "r", "-cpuprofile")
		if a.has("-w", "") {
			targets(a.ops...)
		}
		targets(a.values("-cpuprofile", "")...)
	case "go":
		c.goTool(args)
	default:
		c.fail("`" + name + "` is not known to stay inside the workspace")
	}
}

// copyLike checks cp, mv, install and ln: the destination, the entry a
// source becomes inside a destination directory, and the sources when they
// are moved or linked.
func (c *insideCheck) copyLike(name string, args []string) {
	valued := "tS"
	if name == "install" {
		valued = "tSmog"
	}
	a := splitArgs(args, valued, "--target-directory", "--suffix", "--mode", "--owner", "--group")
	what := "`" + name + "` writes to "
	if a.has("", "--parents") || a.has("", "--strip-program") {
		c.fail("`" + name + " --parents` or `--strip-program` is not known to stay inside")
		return
	}
	if name == "install" && a.has("-d", "--directory") {
		for _, p := range a.ops {
			c.write(p, what+p)
		}
		return
	}
	srcs, dst := a.ops, ""
	if t := a.values("-t", "--target-directory"); len(t) > 0 {
		dst = t[len(t)-1]
	} else if len(srcs) > 0 {
		dst = srcs[len(srcs)-1]
		if len(srcs) > 1 || name != "ln" {
			srcs = srcs[:len(srcs)-1]
		} else {
			dst = "." // ln TARGET: the link lands in the current directory
		}
	}
	if dst == "" {
		return // nothing to write; the command fails
	}
	c.write(dst, what+dst)
	for _, s := range srcs {
		entry := path.Join(dst, path.Base(s))
		c.write(entry, what+entry)
	}
	linkFrom := name == "ln" || name == "cp" && (a.has("-l", "--link") || a.has("-s", "--symbolic-link"))
	if name == "mv" || linkFrom {
		for _, s := range srcs {
			c.write(s, what+s) // moved away, or linked: changing it later changes the source
		}
	}
	if name == "ln" && a.has("-s", "--symbolic") {
		// A relative link target is resolved from the link's directory.
		for _, s := range srcs {
			if !path.IsAbs(s) {
				c.write(path.Join(dst, s), "`ln -s` points to "+s)
				c.write(path.Join(path.Dir(dst), s), "`ln -s` points to "+s)
			}
		}
	}
	if name == "cp" && (a.has("-r", "--recursive") || a.has("-R", "") || a.has("-a", "--archive")) {
		c.fillable(dst, what+dst)
	}
	if name == "cp" && (a.has("-r", "--recursive") || a.has("-R", "") || a.has("-a", "--archive") || a.has("-d", "") ||
		a.has("-P", "--no-dereference")) {
		c.linked = "`cp` copying links"
	}
}

func (c *insideCheck) find(args []string) {
	starts := findStarts(args)
	for i, a := range args {
		switch a {
		case "-L", "-follow":
			if hasAny(args, "-delete") {
				c.fail("`find -L -delete` follows links out of its start paths")
				return
			}
		case "-delete":
			for _, s := range starts {
				c.write(s, "`find -delete` removes under "+s)
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				c.write(args[i+1], "`find "+a+"` writes to "+args[i+1])
			}
		}
	}
}

// tar: creating writes the archive; extracting writes below -C (or the
// current directory) and may create links.
func (c *insideCheck) tar(args []string) {
	var letters []byte
	var values []cmdOpt
	rest := args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		// Traditional form: `tar xzf a.tgz`; values follow in order.
		rest = args[1:]
		k := 0
		for _, l := range []byte(args[0]) {
			letters = append(letters, l)
			if strings.IndexByte("fCTXbKNgLVH", l) >= 0 && k < len(rest) {
				values = append(values, cmdOpt{"-" + string(l), rest[k]})
				k++
			}
		}
		rest = rest[k:]
	}
	a := splitArgs(rest, "fCTXbKNgLVH", "--file", "--directory", "--files-from", "--exclude-from", "--blocking-factor",
		"--starting-file", "--newer", "--listed-incremental", "--tape-length", "--label", "--format", "--exclude", "--strip-components")
	a.opts = append(values, a.opts...)
	for _, l := range letters {
		a.opts = append(a.opts, cmdOpt{"-" + string(l), ""})
	}
	mode := func(short, long string) bool { return a.has(short, long) }
	extract := mode("-x", "--extract") || mode("", "--get")
	create := mode("-c", "--create") || mode("-r", "--append") || mode("-u", "--update") || mode("-A", "--concatenate")
	if mode("-P", "--absolute-names") || mode("", "--transform") || mode("", "--xform") || mode("", "--keep-directory-symlink") || mode("", "--overwrite") {
		c.fail("a tar option lets members land outside the target directory")
		return
	}
	for _, f := range a.values("-f", "--file") {
		if strings.Contains(f, ":") && !mode("", "--force-local") {
			c.fail("`tar -f " + f + "` names a remote archive")
			return
		}
	}
	for _, g := range a.values("-g", "--listed-incremental") {
		c.write(g, "`tar` writes its snapshot file "+g)
	}
	switch {
	case mode("-O", "--to-stdout") || mode("-t", "--list") || mode("-d", "--diff"):
	case extract:
		for _, o := range a.opts {
			if strings.HasPrefix(o.name, "--") && !tarExtractSafe(o.name) {
				c.fail("`tar " + o.name + "` is not known to keep members inside the target directory")
				return
			}
		}
		dirs := a.values("-C", "--directory")
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		for _, d := range dirs {
			c.fillable(d, "`tar` extracts into "+d)
		}
		c.linked = "`tar` extraction"
	case create:
		for _, f := range a.values("-f", "--file") {
			if f != "-" {
				c.write(f, "`tar` writes the archive "+f)
			}
		}
		if mode("", "--remove-files") {
			c.fail("`tar --remove-files` deletes its inputs")
		}
	default:
		c.fail("it is not clear what this tar command does")
	}
}

// tarExtractLong are the long options known not to move where members
// land on extraction.
var tarExtractLong = []string{
	"--extract", "--get", "--file", "--directory", "--gzip", "--gunzip", "--ungzip", "--bzip2", "--xz", "--lzma", "--lzip",
	"--lzop", "--zstd", "--auto-compress", "--verbose", "--strip-components", "--exclude", "--wildcards", "--no-wildcards",
	"--anchored", "--no-anchored", "--no-same-owner", "--no-same-permissions", "--same-permissions", "--preserve-permissions",
	"--keep-old-files", "--skip-old-files", "--keep-newer-files", "--touch", "--warning", "--totals", "--force-local",
	"--no-overwrite-dir", "--delay-directory-restore", "--numeric-owner", "--list", "--to-stdout", "--ignore-zeros",
	"--occurrence", "--recursion", "--no-recursion", "--files-from", "--exclude-from", "--null", "--blocking-factor",
	"--record-size", "--format", "--xattrs", "--no-xattrs", "--acls", "--no-acls", "--selinux", "--no-selinux",
	"--exclude-vcs", "--quiet", "--check-links",
}

func tarExtractSafe(name string) bool {
	for _, l := range tarExtractLong {
		if name == l {
			return true
		}
	}
	return false
}

// gitInside lists the git subcommands whose writes stay in the worktree
// and the repository's own object store and current branch; linkers may
// check out symbolic links from the repository's content.
var gitInside = map[string]bool{
	"add": false, "commit": false, "rm": false, "mv": false, "clean": false,
	"checkout": true, "switch": true, "restore": true, "reset": true, "merge": true, "cherry-pick": true,
	"revert": true, "apply": true, "am": true, "rebase": true,
}

func (c *insideCheck) git(args []string) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		opt, _, inline := strings.Cut(args[i], "=")
		switch opt {
		case "-C":
			if i+1 >= len(args) {
				c.fail("`git -C` without a directory")
				return
			}
			c.write(args[i+1], "`git -C` works in "+args[i+1])
			c.cd([]string{args[i+1]})
			i += 2
			continue
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
			"--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch", "-p", "--paginate":
			i++
			continue
		}
		_ = inline
		c.fail("the git option " + args[i] + " points git at other state")
		return
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	a := splitArgs(rest, "o", "--output", "--output-directory")
	switch {
	case sub == "config":
		for _, r := range rest {
			switch r {
			case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list", "--get-color", "--get-colorbool":
				return
			}
		}
		c.fail("`git config` changes git configuration, which is outside the workspace")
	case sub == "format-patch":
		if a.has("", "--stdout") {
			return
		}
		dirs := append(a.values("-o", "--output-directory"), a.values("", "--output")...)
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		for _, d := range dirs {
			c.write(d, "`git format-patch` writes to "+d)
		}
	case gitReaders[sub] || sub == "grep" || sub == "shortlog" || sub == "describe" || sub == "ls-tree" || sub == "cat-file" ||
		sub == "show-ref" || sub == "for-each-ref" || sub == "rev-list" || sub == "merge-base" || sub == "version":
		for _, o := range a.values("", "--output") {
			c.write(o, "`git "+sub+" --output` writes to "+o)
		}
	case sub == "branch" && (len(rest) == 0 || hasAny(rest, "--list", "-l", "-a", "-r", "-v", "-vv", "--show-current")):
	case sub == "stash" && len(rest) > 0 && (rest[0] == "list" || rest[0] == "show"):
	default:
		linker, ok := gitInside[sub]
		if !ok {
			c.fail("`git " + sub + "` is not known to stay inside the workspace")
			return
		}
		if sub == "apply" && (a.has("", "--unsafe-paths") || a.has("", "--directory")) {
			c.fail("`git apply` is told to write outside the repository")
			return
		}
		c.write(".", "`git "+sub+"` writes to the worktree")
		switch sub {
		case "add", "rm", "mv", "restore", "checkout", "clean", "reset":
			// Pathspecs name what changes; branch names checked as paths
			// are harmless.
			for _, p := range splitArgs(rest, "mbBsoUCce", "--message", "--source", "--pathspec-from-file", "--exclude", "--conflict").ops {
				c.write(p, "`git "+sub+"` changes "+p)
			}
		}
		if linker {
			c.linked = "`git " + sub + "`"
		}
	}
}

// goTool allows the go subcommands that run no code from the workspace;
// their writes to the build and module caches are the toolchain's own.
func (c *insideCheck) goTool(args []string) {
	if len(args) >= 2 && args[0] == "-C" {
		c.write(args[1], "`go -C` works in "+args[1])
		c.cd(args[1:2])
		args = args[2:]
	}
	if len(args) == 0 {
		return
	}
	sub, rest := args[0], args[1:]
	for _, r := range rest {
		if r == "-C" || r == "--C" || strings.HasPrefix(r, "-C=") || strings.HasPrefix(r, "--C=") {
			c.fail("`go " + sub + " -C` works in another directory")
			return
		}
	}
	a := splitArgs(rest, "o", "-o", "-pkgdir", "-modfile")
	switch sub {
	case "version", "doc", "help", "list":
	case "env":
		if a.has("-w", "") || a.has("-u", "") {
			c.fail("`go env -w` writes the user's go configuration")
		}
	case "build", "vet", "mod", "get", "fmt", "work":
		for _, o := range a.opts {
			switch o.name {
			case "-o", "-pkgdir", "-modfile":
				c.write(o.value, "`go "+sub+" "+o.name+"` writes to "+o.value)
			}
		}
		if sub == "fmt" {
			for _, p := range a.ops {
				if !strings.HasPrefix(p, ".") {
					c.fail("`go fmt " + p + "` may format packages outside the workspace")
					return
				}
				c.write(strings.TrimSuffix(p, "/..."), "`go fmt` rewrites "+p)
			}
		}
		if sub == "mod" && len(rest) > 0 && rest[0] == "edit" {
			for _, p := range a.ops[1:] {
				c.write(p, "`go mod edit` writes "+p)
			}
		}
		c.write(".", "`go "+sub+"` writes to the current directory")
	default:
		c.fail("`go " + sub + "` runs code from the workspace or installs outside it")
	}
}
