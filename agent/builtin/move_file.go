package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("move_file", func(env agent.ToolEnv) agent.Tool { return &moveFile{env: env} })
}

// moveFile renames a file or directory.
type moveFile struct{ env agent.ToolEnv }

func (*moveFile) Name() string { return "move_file" }
func (*moveFile) Description() string {
	return "Move or rename a file or directory from path to new_path. Missing parent directories of new_path are created. " +
		"An existing destination is never replaced unless overwrite is true."
}

func (*moveFile) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Existing file or directory to move, relative to the workspace or absolute."},
    "new_path": {"type": "string", "description": "Full destination path including the new name (not just a directory)."},
    "overwrite": {"type": "boolean", "description": "Replace an existing destination file. Default false."}
  },
  "required": ["path", "new_path"],
  "additionalProperties": false
}`)
}

type moveFileArgs struct {
	Path      string `json:"path"`
	NewPath   string `json:"new_path"`
	Overwrite bool   `json:"overwrite"`
}

func (t *moveFile) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a moveFileArgs
	if err := decodeArgs("move_file", raw, &a, "path", "new_path"); err != nil {
		return "", err
	}
	// Both ends are writes: the source disappears, the destination appears.
	src, err := writePath("move_file", t.env, a.Path)
	if err != nil {
		return "", err
	}
	dst, err := writePath("move_file", t.env, a.NewPath)
	if err != nil {
		return "", err
	}
	if src == dst {
		return "", fmt.Errorf("move_file: path and new_path name the same file")
	}
	if _, err := os.Lstat(src); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("move_file: %s does not exist", a.Path)
		}
		return "", fmt.Errorf("move_file: %w", err)
	}
	// The moved file and any file it replaces must be the versions the
	// model saw (a directory is moved as a whole: its files are not
	// checked one by one).
	if info, err := os.Lstat(src); err == nil && !info.IsDir() {
		if err := checkSeen("move_file", t.env, a.Path, src); err != nil {
			return "", err
		}
	}
	if rel, err := filepath.Rel(src, dst); err == nil && filepath.IsLocal(rel) {
		return "", fmt.Errorf("move_file: cannot move %s into itself", a.Path)
	}
	switch info, err := os.Lstat(dst); {
	case err == nil && info.IsDir():
		return "", fmt.Errorf("move_file: %s is an existing directory; give the full destination path including the name", a.NewPath)
	case err == nil && !a.Overwrite:
		return "", fmt.Errorf("move_file: %s already exists; set overwrite to true to replace it", a.NewPath)
	case err == nil:
		if err := checkSeen("move_file", t.env, a.NewPath, dst); err != nil {
			return "", err
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("move_file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("move_file: creating parent directories: %w", err)
	}
	// The existence check and the rename are not one atomic step; another
	// writer in the same workspace could slip in between. Tool calls that
	// write are serialised by the harness, which makes this acceptable.
	if err := os.Rename(src, dst); err != nil {
		return "", fmt.Errorf("move_file: %w", err)
	}
	sawFile(t.env, dst)
	return fmt.Sprintf("moved %s to %s", displayPath(t.env, src), displayPath(t.env, dst)), nil
}
