package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("present", func(env agent.ToolEnv) agent.Tool { return &present{env: env} })
}

// present declares the files the people who asked should look at: the
// run's deliverables, shown in its final report (chat, `tasks show`, the
// dashboard). The host checks every path at once (all or nothing) and
// records only the paths, sizes and descriptions: it never copies, runs
// or uploads a file, and the model gets no byte of them back.
type present struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*present)(nil)

// The declaration is bounded: a report lists it, and eight files are
// already more than a person opens.
const (
	presentMaxFiles       = 8
	presentMaxDescription = 300
)

func (*present) Name() string   { return "present" }
func (*present) ReadOnly() bool { return true }
func (*present) Description() string {
	return "Declare 1 to 8 existing files of the workspace as the deliverables of this task, after writing them and before your final answer. " +
		"They are listed in the final report people see. Each call replaces the previous list. Only the paths and descriptions are recorded."
}

func (*present) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "files": {
      "type": "array",
      "description": "The deliverables, 1 to 8 files of the workspace.",
      "minItems": 1,
      "maxItems": 8,
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "The file, relative to the workspace."},
          "description": {"type": "string", "description": "What it is, in a short sentence (optional)."}
        },
        "required": ["path"],
        "additionalProperties": false
      }
    }
  },
  "required": ["files"],
  "additionalProperties": false
}`)
}

type presentArgs struct {
	Files []json.RawMessage `json:"files"`
}

type presentFile struct {
	Path        string `json:"path"`
	Description string `json:"description"`
}

func (t *present) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a presentArgs
	if err := decodeArgs("present", raw, &a, "files"); err != nil {
		return "", err
	}
	if len(a.Files) == 0 || len(a.Files) > presentMaxFiles {
		return "", fmt.Errorf("present: declare 1 to %d files, got %d", presentMaxFiles, len(a.Files))
	}
	out := make([]agent.Deliverable, 0, len(a.Files))
	seen := map[string]bool{}
	for i, rawFile := range a.Files {
		var f presentFile
		if err := decodeArgs(fmt.Sprintf("present: files[%d]", i), rawFile, &f, "path"); err != nil {
			return "", err
		}
		d, err := t.check(f)
		if err != nil {
			return "", fmt.Errorf("present: files[%d]: %w; nothing was recorded", i, err)
		}
		if seen[d.Path] {
			return "", fmt.Errorf("present: files[%d]: %s is listed twice; nothing was recorded", i, d.Path)
		}
		seen[d.Path] = true
		out = append(out, d)
	}
	if t.env.Emit != nil {
		t.env.Emit(agent.Event{Type: agent.EventDeliverables, Deliverables: out})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "recorded %d deliverable(s) for the final report:", len(out))
	for _, d := range out {
		fmt.Fprintf(&b, "\n- %s (%d bytes)", d.Path, d.Bytes)
	}
	return b.String(), nil
}

// check resolves one declared file: readable through the guard, inside the
// workspace (a deliverable is part of the task's branch), a regular file.
func (t *present) check(f presentFile) (agent.Deliverable, error) {
	desc := strings.Join(strings.Fields(f.Description), " ")
	if len(desc) > presentMaxDescription || !utf8.ValidString(desc) {
		return agent.Deliverable{}, fmt.Errorf("the description must be valid text under %d bytes", presentMaxDescription)
	}
	abs, err := readPath("present", t.env, f.Path)
	if err != nil {
		return agent.Deliverable{}, errors.New(strings.TrimPrefix(err.Error(), "present: "))
	}
	rel := displayPath(t.env, abs)
	if filepath.IsAbs(rel) || rel == "." {
		return agent.Deliverable{}, fmt.Errorf("%s is not a file inside the workspace", f.Path)
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return agent.Deliverable{}, fmt.Errorf("%s does not exist; write it first", rel)
	case err != nil:
		return agent.Deliverable{}, fmt.Errorf("%s: %w", rel, err)
	case !info.Mode().IsRegular():
		return agent.Deliverable{}, fmt.Errorf("%s is not a regular file", rel)
	}
	return agent.Deliverable{Path: rel, Description: desc, Bytes: info.Size()}, nil
}
