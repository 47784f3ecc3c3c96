package policy

import (
	"path"
	"strings"
)

// This file knows where the common writers write, for ShellStaysInside.
// A command missing here is not proven to stay inside.

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
