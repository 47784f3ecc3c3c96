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
	agent.RegisterBuiltin("write_file", func(env agent.ToolEnv) agent.Tool { return &writeFile{env: env} })
}

// writeFile creates or replaces a whole file.
type writeFile struct{ env agent.ToolEnv }

func (*writeFile) Name() string { return "write_file" }
func (*writeFile) Description() string {
	return "Create a file or replace its whole content. Missing parent directories are created. " +
		"To change part of an existing file prefer edit_file or multi_edit, which keep the rest intact. " +
		"Replacing an existing file needs it read first: one not read since it last changed is refused."
}

func (*writeFile) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to write, relative to the workspace or absolute."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)
}

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (t *writeFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a writeFileArgs
	if err := decodeArgs("write_file", raw, &a, "path", "content"); err != nil {
		return "", err
	}
	p, err := writePath("write_file", t.env, a.Path)
	if err != nil {
		return "", err
	}
	perm := fs.FileMode(0o644)
	summary := "created %s (%d bytes)"
	info, err := os.Stat(p)
	switch {
	case err == nil && info.IsDir():
		return "", fmt.Errorf("write_file: %s is a directory", a.Path)
	case err == nil && !info.Mode().IsRegular():
		return "", fmt.Errorf("write_file: %s is not a regular file", a.Path)
	case err == nil:
		// Replacing a whole file drops whatever changed in it since the
		// model last saw it: it must have seen this version.
		if err := checkSeen("write_file", t.env, a.Path, p); err != nil {
			return "", err
		}
		perm = info.Mode().Perm()
		summary = "replaced %s (%d bytes; it had " + fmt.Sprint(info.Size()) + ")"
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("write_file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("write_file: creating parent directories: %w", err)
	}
	if err := writeText(ctx, t.env, p, []byte(a.Content), perm); err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	sawFile(t.env, p)
	return fmt.Sprintf(summary, displayPath(t.env, p), len(a.Content)), nil
}
