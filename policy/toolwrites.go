package policy

import "strings"

// Where git and the go toolchain write, for ShellStaysInside.

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
