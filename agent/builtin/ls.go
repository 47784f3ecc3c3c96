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

const lsDefaultMax = 500

func init() {
	agent.RegisterBuiltin("ls", func(env agent.ToolEnv) agent.Tool { return &ls{env: env} })
}

// ls lists a directory, optionally recursively.
type ls struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*ls)(nil)

func (*ls) Name() string   { return "ls" }
func (*ls) ReadOnly() bool { return true }
func (*ls) Description() string {
	return "List a directory, sorted, with directories marked by a trailing /. Set recursive to list the whole tree " +
		"(paths relative to the listed directory; the contents of .git are skipped). To find files by name pattern use glob."
}

func (*ls) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, relative to the workspace or absolute. Default: the workspace."},
    "recursive": {"type": "boolean", "description": "List subdirectories too. Default false."},
    "max_entries": {"type": "integer", "minimum": 1, "description": "Most entries to return. Default 500."}
  },
  "additionalProperties": false
}`)
}

type lsArgs struct {
	Path       string `json:"path"`
	Recursive  bool   `json:"recursive"`
	MaxEntries int    `json:"max_entries"`
}

func (t *ls) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a lsArgs
	if err := decodeArgs("ls", raw, &a); err != nil {
		return "", err
	}
	if a.MaxEntries < 0 {
		return "", fmt.Errorf("ls: max_entries must be 1 or more, got %d", a.MaxEntries)
	}
	limit := cmp.Or(a.MaxEntries, lsDefaultMax)
	name := cmp.Or(a.Path, ".")
	root, err := readPath("ls", t.env, name)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("ls: %w", err)
	}
	if !info.IsDir() {
		return fmt.Sprintf("%s is a file of %d bytes (use read_file to read it)", name, info.Size()), nil
	}
	var entries []string
	truncated := false
	add := func(rel string, isDir bool) bool {
		if len(entries) == limit {
			truncated = true
			return false
		}
		if isDir {
			rel += "/"
		}
		entries = append(entries, filepath.ToSlash(rel))
		return true
	}
	if !a.Recursive {
		des, err := os.ReadDir(root)
		if err != nil {
			return "", fmt.Errorf("ls: %w", err)
		}
		for _, de := range des {
			if !visible(t.env, filepath.Join(root, de.Name())) {
				continue
			}
			if !add(de.Name(), de.IsDir()) {
				break
			}
		}
	} else {
		errStop := errors.New("stop")
		err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if p == root {
				return err
			}
			if err != nil {
				return nil // an unreadable subdirectory is left out, not fatal
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if !visible(t.env, p) {
				return skipEntry(de)
			}
			rel, _ := filepath.Rel(root, p)
			if !add(rel, de.IsDir()) {
				return errStop
			}
			if de.IsDir() && de.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return "", fmt.Errorf("ls: %w", err)
		}
	}
	// ReadDir and WalkDir order per directory; sort the full paths so the
	// listing reads like a tree whatever the walk order was.
	slices.Sort(entries)
	if len(entries) == 0 {
		return fmt.Sprintf("%s is empty", name), nil
	}
	out := strings.Join(entries, "\n")
	if truncated {
		out += fmt.Sprintf("\n\n[listing stopped at %d entries; list a subdirectory, turn off recursive, or raise max_entries]", limit)
	}
	return out, nil
}

// visible reports whether the guard lets a reader see p. Listings pass every
// entry through it so that a path the policy hides from readers does not
// show up in a walk either.
func visible(env agent.ToolEnv, p string) bool {
	_, err := env.Paths.ReadPath(p)
	return err == nil
}

// skipEntry makes a walk skip de: its whole subtree if it is a directory.
func skipEntry(de fs.DirEntry) error {
	if de.IsDir() {
		return fs.SkipDir
	}
	return nil
}
