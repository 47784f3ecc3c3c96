package builtin

import (
	"context"
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("multi_edit", func(env agent.ToolEnv) agent.Tool { return &multiEdit{env: env} })
}

// multiEdit applies several exact-string replacements to one file, all or
// nothing.
type multiEdit struct{ env agent.ToolEnv }

func (*multiEdit) Name() string { return "multi_edit" }
func (*multiEdit) Description() string {
	return "Apply several exact-string replacements to one file, in order, atomically: if any edit fails nothing is written. " +
		"Each edit sees the result of the previous ones. Every old_string must occur exactly once at its turn unless its replace_all is true. " +
		"Read the file first: a file not read since it last changed is refused."
}

func (*multiEdit) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit, relative to the workspace or absolute."},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements applied in order.",
      "items": {
        "type": "object",
        "properties": {
          "old_string": {"type": "string", "description": "Exact text to replace."},
          "new_string": {"type": "string", "description": "Text to put in its place."},
          "replace_all": {"type": "boolean", "description": "Replace every occurrence. Default false."}
        },
        "required": ["old_string", "new_string"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`)
}

type multiEditArgs struct {
	Path  string            `json:"path"`
	Edits []json.RawMessage `json:"edits"`
}

func (t *multiEdit) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a multiEditArgs
	if err := decodeArgs("multi_edit", raw, &a, "path", "edits"); err != nil {
		return "", err
	}
	if len(a.Edits) == 0 {
		return "", fmt.Errorf("multi_edit: edits must hold at least one edit")
	}
	// Each edit is decoded on its own so a missing field is named with its
	// index; a missing new_string must never turn into a deletion.
	edits := make([]edit, len(a.Edits))
	for i, e := range a.Edits {
		if err := decodeArgs(fmt.Sprintf("multi_edit: edits[%d]", i), e, &edits[i], "old_string", "new_string"); err != nil {
			return "", err
		}
	}
	p, err := writePath("multi_edit", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, perm, err := readTextFile(ctx, t.env, "multi_edit", a.Path, p)
	if err != nil {
		return "", err
	}
	if err := checkSeen("multi_edit", t.env, a.Path, p); err != nil {
		return "", err
	}
	content, total := string(data), 0
	for i, e := range edits {
		out, n, _, err := e.apply(content)
		if err != nil {
			return "", fmt.Errorf("multi_edit: %s: edit %d of %d: %w (nothing was written)", a.Path, i+1, len(a.Edits), err)
		}
		content, total = out, total+n
	}
	if err := writeText(ctx, t.env, p, []byte(content), perm); err != nil {
		return "", fmt.Errorf("multi_edit: %w", err)
	}
	sawFile(t.env, p)
	return fmt.Sprintf("edited %s: applied %s (%s)", displayPath(t.env, p), plural(len(a.Edits), "edit"), plural(total, "replacement")), nil
}
