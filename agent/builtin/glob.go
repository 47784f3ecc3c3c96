package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/agent"
)

const globMaxResults = 1000

func init() {
	agent.RegisterBuiltin("glob", func(env agent.ToolEnv) agent.Tool { return &glob{env: env} })
}

// glob finds files whose path matches a pattern.
type glob struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*glob)(nil)

func (*glob) Name() string   { return "glob" }
func (*glob) ReadOnly() bool { return true }
func (*glob) Description() string {
	return "Find files by path pattern, e.g. \"**/*.go\" or \"src/**/*.{ts,tsx}\". * ? and [abc] match within one path segment, " +
		"** matches any number of directories. Returns matching files (not directories) relative to path, sorted; .git is skipped. " +
		"To search file contents use grep."
}

func (*glob) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern matched against paths relative to path, e.g. \"**/*_test.go\"."},
    "path": {"type": "string", "description": "Directory to search from, relative to the workspace or absolute. Default: the workspace."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (t *glob) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a globArgs
	if err := decodeArgs("glob", raw, &a, "pattern"); err != nil {
		return "", err
	}
	base, pattern := cmp.Or(a.Path, "."), filepath.ToSlash(a.Pattern)
	if strings.HasPrefix(pattern, "/") {
		// An absolute pattern carries its own base: split off the literal
		// directories in front of the first wildcard.
		base, pattern = splitLiteralPrefix(pattern)
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return "", fmt.Errorf("glob: %w", err)
	}
	root, err := readPath("glob", t.env, base)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("glob: %w", err)
	} else if !info.IsDir() {
		return "", fmt.Errorf("glob: %s is not a directory", base)
	}
	var found []string
	truncated := false
	errStop := errors.New("stop")
	err = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if p == root {
			return err
		}
		if err != nil {
			return nil // an unreadable subdirectory is left out, not fatal
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if de.IsDir() {
			if de.Name() == ".git" || !g.mayContain(rel) || !visible(t.env, p) {
				return fs.SkipDir
			}
			return nil
		}
		if !g.match(rel) || !visible(t.env, p) {
			return nil
		}
		if len(found) == globMaxResults {
			truncated = true
			return errStop
		}
		found = append(found, rel)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", fmt.Errorf("glob: %w", err)
	}
	if len(found) == 0 {
		return fmt.Sprintf("no files match %q under %s", a.Pattern, base), nil
	}
	slices.Sort(found)
	out := strings.Join(found, "\n")
	if truncated {
		out += fmt.Sprintf("\n\n[stopped at %d files; use a narrower pattern or path]", globMaxResults)
	}
	return out, nil
}

// splitLiteralPrefix splits an absolute slash pattern into the directory
// before its first wildcard segment and the rest.
func splitLiteralPrefix(pattern string) (dir, rest string) {
	segs := strings.Split(pattern, "/")
	i := 0
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], "*?[{\\") {
		i++
	}
	dir = strings.Join(segs[:i], "/")
	if dir == "" {
		dir = "/"
	}
	return filepath.FromSlash(dir), strings.Join(segs[i:], "/")
}
