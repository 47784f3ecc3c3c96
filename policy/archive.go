package policy

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Archives fill directories with entries they do not name, so ShellStaysInside
// checks where they extract and that nothing there leads out.

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

// maxTreeWalk bounds the entries fillable inspects before giving up.
const maxTreeWalk = 10000

// fillable requires that dir, which a command fills with entries it does
// not name (an archive's members, a recursive copy), holds no symbolic
// links: a member written below one would land wherever it points. A
// directory that does not exist yet is empty.
func (c *insideCheck) fillable(dir, what string) {
	c.write(dir, what)
	if c.why != "" || c.cwdUnknown {
		return
	}
	bases := c.cwds
	if filepath.IsAbs(dir) {
		bases = []string{"/"}
	}
	errLink := errors.New("link")
	for _, base := range bases {
		r, err := resolvePath(dir, base)
		if err != nil {
			c.fail(what + ", which cannot be resolved")
			return
		}
		n := 0
		err = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == r {
				return fs.SkipAll
			}
			if err != nil {
				return err
			}
			if n++; n > maxTreeWalk {
				return errors.New("too many entries")
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return errLink
			}
			return nil
		})
		switch {
		case errors.Is(err, errLink):
			c.fail(what + ", which holds symbolic links that new entries could follow out of the workspace")
			return
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			c.fail(what + ", which cannot be inspected")
			return
		}
	}
}
