package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds symlink hops while resolving, as the kernel does.
const maxLinks = 40

// resolvePath returns the absolute, symlink-free form of p (relative paths
// are taken against base). Every existing component is resolved, dangling
// symlinks included, and `..` applies to the resolved parent, exactly as
// the kernel would walk it; components that do not exist yet are appended
// as they are. So neither `..` nor a symlink (to a file, a directory or a
// missing target) can make a path look inside a root it is not in.
func resolvePath(p, base string) (string, error) {
	if !filepath.IsAbs(p) {
		// Not filepath.Join: it would clean `link/..` away lexically before
		// the link is followed.
		p = base + string(filepath.Separator) + p
	}
	rest := splitPath(p)
	resolved := string(filepath.Separator)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("policy: resolve %q: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("policy: resolve %q: too many symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("policy: resolve %q: %w", p, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// within reports whether p is root or lies below it; both are resolved.
func within(p, root string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
