package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("notebook_edit", func(env agent.ToolEnv) agent.Tool { return &notebookEdit{env: env} })
	agent.RegisterReobserver("notebook_edit", reobservePath("path"))
}

// notebookEdit changes one cell of a Jupyter notebook: replaces its source,
// inserts a new cell, or deletes one. The notebook stays valid JSON with
// every field it had; like edit_file it needs the task to have read the
// file's current version first.
type notebookEdit struct{ env agent.ToolEnv }

func (*notebookEdit) Name() string { return "notebook_edit" }
func (*notebookEdit) Description() string {
	return "Edit one cell of a Jupyter notebook (.ipynb): replace a cell's source (edit_mode replace, the default), insert a new cell " +
		"(insert), or delete a cell (delete). Name the cell by cell_id or by its 0-based cell_index; an insert goes at cell_index, " +
		"after cell_id, or at the end. Replacing a code cell clears its outputs. Read the notebook first: a file not read since it last changed is refused."
}

func (*notebookEdit) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The notebook, relative to the workspace or absolute."},
    "cell_id": {"type": "string", "description": "The id of the cell to change (or to insert after)."},
    "cell_index": {"type": "integer", "minimum": 0, "description": "The 0-based position of the cell to change (or where to insert)."},
    "new_source": {"type": "string", "description": "The cell's new source (replace, insert)."},
    "cell_type": {"type": "string", "enum": ["code", "markdown", "raw"], "description": "The cell's type: required for insert; for replace, changes it."},
    "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "Default replace."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

type notebookEditArgs struct {
	Path      string  `json:"path"`
	CellID    string  `json:"cell_id"`
	CellIndex *int    `json:"cell_index"`
	NewSource *string `json:"new_source"`
	CellType  string  `json:"cell_type"`
	EditMode  string  `json:"edit_mode"`
}

func (t *notebookEdit) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a notebookEditArgs
	if err := decodeArgs("notebook_edit", raw, &a, "path"); err != nil {
		return "", err
	}
	mode := a.EditMode
	if mode == "" {
		mode = "replace"
	}
	if err := a.check(mode); err != nil {
		return "", fmt.Errorf("notebook_edit: %w", err)
	}
	p, err := writePath("notebook_edit", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, perm, err := readTextFile(ctx, t.env, "notebook_edit", a.Path, p)
	if err != nil {
		return "", err
	}
	if err := checkSeen("notebook_edit", t.env, a.Path, p); err != nil {
		return "", err
	}
	nb, err := parseNotebook(data)
	if err != nil {
		return "", fmt.Errorf("notebook_edit: %s: %w", a.Path, err)
	}
	what, err := a.apply(nb, mode)
	if err != nil {
		return "", fmt.Errorf("notebook_edit: %s: %w", a.Path, err)
	}
	out, err := nb.marshal()
	if err != nil {
		return "", fmt.Errorf("notebook_edit: %w", err)
	}
	if err := writeText(ctx, t.env, p, out, perm); err != nil {
		return "", fmt.Errorf("notebook_edit: %w", err)
	}
	sawFile(t.env, p)
	return fmt.Sprintf("edited %s: %s; the notebook has %s", displayPath(t.env, p), what, plural(len(nb.cells), "cell")), nil
}

// check refuses argument combinations before anything is read.
func (a *notebookEditArgs) check(mode string) error {
	if a.CellIndex != nil && *a.CellIndex < 0 {
		return fmt.Errorf("cell_index must be 0 or more, got %d", *a.CellIndex)
	}
	if a.CellIndex != nil && a.CellID != "" {
		return errors.New("name the cell by cell_id or by cell_index, not both")
	}
	if a.CellType != "" && !cellTypes[a.CellType] {
		return fmt.Errorf("cell_type must be code, markdown or raw, got %q", a.CellType)
	}
	switch mode {
	case "replace":
		if a.NewSource == nil {
			return errors.New("replace needs new_source")
		}
	case "insert":
		if a.NewSource == nil || a.CellType == "" {
			return errors.New("insert needs new_source and cell_type")
		}
		return nil
	case "delete":
		if a.NewSource != nil || a.CellType != "" {
			return errors.New("delete takes neither new_source nor cell_type")
		}
	default:
		return fmt.Errorf("edit_mode must be replace, insert or delete, got %q", mode)
	}
	if a.CellIndex == nil && a.CellID == "" {
		return fmt.Errorf("%s needs cell_id or cell_index", mode)
	}
	return nil
}

// apply makes the edit and says what it did.
func (a *notebookEditArgs) apply(nb *notebook, mode string) (string, error) {
	at := len(nb.cells) // an insert's default: the end
	switch {
	case a.CellID != "":
		if at = nb.find(a.CellID); at < 0 {
			return "", fmt.Errorf("no cell has id %q", a.CellID)
		}
		if mode == "insert" {
			at++
		}
	case a.CellIndex != nil:
		at = *a.CellIndex
		limit := len(nb.cells) - 1
		if mode == "insert" {
			limit++
		}
		if at > limit {
			return "", fmt.Errorf("cell_index %d is out of range: the notebook has %s", at, plural(len(nb.cells), "cell"))
		}
	}
	switch mode {
	case "insert":
		nb.insert(at, *a.NewSource, a.CellType)
		return fmt.Sprintf("inserted a %s cell at index %d", a.CellType, at), nil
	case "delete":
		typ := cellType(nb.cells[at])
		nb.remove(at)
		return fmt.Sprintf("deleted %s cell %d", typ, at), nil
	}
	nb.setSource(at, *a.NewSource, a.CellType)
	return fmt.Sprintf("replaced the source of %s cell %d", cellType(nb.cells[at]), at), nil
}
