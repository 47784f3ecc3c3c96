package workspace

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// DefaultBase is the base ref of a Spec that names none.
const DefaultBase = "main"

// Spec is one configured [[workspaces]] entry.
type Spec struct {
	Name  string   // the workspace name tasks refer to
	Repo  string   // a local path to a git repository, or a git URL (https://, ssh://, git@host:path, file://)
	Base  string   // the base branch or ref; default "main"
	Setup []string // shell commands run (bash -c, in order) in a new worktree before the task starts
}

// urlSchemes are the transports a Repo URL may use. git's other transports
// (ext::, fd::) can run arbitrary commands and are never accepted.
var urlSchemes = []string{"https://", "http://", "ssh://", "git://", "file://"}

// normalize validates s and applies defaults to a copy. A relative local
// path is made absolute against the process's working directory.
func (s Spec) normalize() (Spec, error) {
	s.Base = cmp.Or(strings.TrimSpace(s.Base), DefaultBase)
	if err := validName(s.Name); err != nil {
		return s, err
	}
	where := fmt.Sprintf("in the [[workspaces]] entry %q", s.Name)
	if strings.TrimSpace(s.Repo) == "" {
		return s, invalid("repo is empty %s: set repo to a local path or a git URL", where)
	}
	if strings.HasPrefix(s.Base, "-") {
		return s, invalid("base %q %s is not a ref: set base to a branch, tag or commit", s.Base, where)
	}
	for i, c := range s.Setup {
		if strings.TrimSpace(c) == "" {
			return s, invalid("setup[%d] %s is empty: remove it", i, where)
		}
	}
	if isURL(s.Repo) {
		if !allowedURL(s.Repo) {
			return s, invalid("repo %q %s uses an unsupported transport: use https://, ssh://, git://, file:// or host:path", redact(s.Repo), where)
		}
		return s, nil
	}
	abs, err := filepath.Abs(s.Repo)
	if err != nil {
		return s, invalid("repo %q %s: %w", s.Repo, where, err)
	}
	s.Repo = abs
	return s, nil
}

// validName keeps a workspace name usable as a directory name under
// <root>/repos.
func validName(name string) error {
	if name == "" {
		return invalid("a [[workspaces]] entry has no name: set name")
	}
	if len(name) > maxTaskIDLen || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") {
		return invalid("invalid workspace name %q: use letters, digits, '.', '_' and '-', not starting with '.' or '-'", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return invalid("invalid workspace name %q: use letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// isURL reports whether repo is to be cloned rather than used in place: it
// has a scheme, or it is git's scp-like form host:path (a colon before the
// first slash), which git itself treats as remote.
func isURL(repo string) bool {
	if strings.Contains(repo, "://") || strings.HasPrefix(repo, "ext::") || strings.HasPrefix(repo, "fd::") {
		return true
	}
	colon := strings.IndexByte(repo, ':')
	if colon <= 0 {
		return false
	}
	slash := strings.IndexByte(repo, '/')
	return slash < 0 || colon < slash
}

// allowedURL reports whether a URL uses a transport that only moves data.
func allowedURL(repo string) bool {
	if strings.HasPrefix(repo, "-") {
		return false
	}
	for _, s := range urlSchemes {
		if strings.HasPrefix(strings.ToLower(repo), s) {
			return len(repo) > len(s)
		}
	}
	if strings.Contains(repo, "://") || strings.Contains(repo, "::") {
		return false
	}
	return isURL(repo) // scp-like host:path
}

// userinfo matches the credentials part of a URL (scheme://user:secret@),
// wherever it appears in a message or in git's output.
var userinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@`) })

// redact hides credentials embedded in URLs so errors and logs never carry
// them.
func redact(s string) string {
	return userinfo().ReplaceAllString(s, "${1}***@")
}

// invalid builds an error wrapping ErrInvalid.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
