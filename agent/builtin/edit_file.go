package builtin

import (
	"context"
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("edit_file", func(env agent.ToolEnv) agent.Tool { return &editFile{env: env} })
}

// editFile replaces one exact string in a file.
type editFile struct{ env agent.ToolEnv }

func (*editFile) Name() string { return "edit_file" }
func (*editFile) Description() string {
	return "Replace an exact string in a file. old_string must match the file byte for byte (copy it from read_file output " +
		"without the line-number prefix) and must occur exactly once unless replace_all is true; add surrounding lines to make it unique. " +
		"For several changes to one file use multi_edit. Read the file first: a file not read since it last changed is refused."
}

func (*editFile) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit, relative to the workspace or absolute."},
    "old_string": {"type": "string", "description": "Exact text to replace."},
    "new_string": {"type": "string", "description": "Text to put in its place; must differ from old_string."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`)
}

type editFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (t *editFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a editFileArgs
	if err := decodeArgs("edit_file", raw, &a, "path", "old_string", "new_string"); err != nil {
		return "", err
	}
	p, err := writePath("edit_file", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, perm, err := readTextFile(ctx, t.env, "edit_file", a.Path, p)
	if err != nil {
		return "", err
	}
	if err := checkSeen("edit_file", t.env, a.Path, p); err != nil {
		return "", err
	}
	out, n, line, err := edit{a.OldString, a.NewString, a.ReplaceAll}.apply(string(data))
	if err != nil {
		return "", fmt.Errorf("edit_file: %s: %w", a.Path, err)
	}
	if err := writeText(ctx, t.env, p, []byte(out), perm); err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	sawFile(t.env, p)
	return fmt.Sprintf("edited %s: replaced %s (first at line %d)", displayPath(t.env, p), plural(n, "occurrence"), line), nil
}
