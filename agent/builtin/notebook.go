package builtin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A Jupyter notebook (nbformat 4) as notebook_edit changes it: the cells
// are decoded only as far as an edit needs, and every other field, of the
// notebook and of each cell, is carried through byte for byte. The file is
// untrusted input (the model or a teammate wrote it): anything that is not
// a notebook is refused, never half-edited.

// notebookMaxBytes bounds a notebook the tool will parse and rewrite.
const notebookMaxBytes = 32 << 20

// notebook is a parsed .ipynb file.
type notebook struct {
	fields map[string]json.RawMessage   // everything but cells
	cells  []map[string]json.RawMessage // each cell's fields
	ids    bool                         // cells carry ids (nbformat 4.5+)
}

// cellTypes are the cell kinds nbformat 4 knows.
var cellTypes = map[string]bool{"code": true, "markdown": true, "raw": true}

// parseNotebook reads data as an nbformat 4 notebook.
func parseNotebook(data []byte) (*notebook, error) {
	if len(data) > notebookMaxBytes {
		return nil, fmt.Errorf("the notebook is %d bytes, over the %d this tool edits", len(data), notebookMaxBytes)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return nil, errors.New("the file is not a notebook: not a JSON object")
	}
	var major int
	if err := json.Unmarshal(fields["nbformat"], &major); err != nil || major != 4 {
		return nil, errors.New("the file is not an nbformat 4 notebook (nbformat must be 4)")
	}
	var cells []map[string]json.RawMessage
	if err := json.Unmarshal(fields["cells"], &cells); err != nil || fields["cells"] == nil {
		return nil, errors.New("the notebook's cells are not a list of objects")
	}
	nb := &notebook{fields: fields, cells: cells}
	delete(nb.fields, "cells")
	var minor int
	_ = json.Unmarshal(fields["nbformat_minor"], &minor)
	nb.ids = minor >= 5
	for i, c := range cells {
		if c == nil {
			return nil, fmt.Errorf("cell %d is not an object", i)
		}
		var typ string
		if err := json.Unmarshal(c["cell_type"], &typ); err != nil || !cellTypes[typ] {
			return nil, fmt.Errorf("cell %d has no valid cell_type (code, markdown or raw)", i)
		}
		if _, err := cellSource(c); err != nil {
			return nil, fmt.Errorf("cell %d: %w", i, err)
		}
		if _, ok := c["id"]; ok {
			nb.ids = true
		}
	}
	return nb, nil
}

// cellSource is a cell's source text: nbformat stores a string or a list of
// strings (lines).
func cellSource(c map[string]json.RawMessage) (string, error) {
	raw, ok := c["source"]
	if !ok {
		return "", errors.New("no source")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return "", errors.New("the source is neither a string nor a list of strings")
	}
	return strings.Join(lines, ""), nil
}

// cellID is a cell's id, "" when it has none.
func cellID(c map[string]json.RawMessage) string {
	var id string
	_ = json.Unmarshal(c["id"], &id)
	return id
}

// cellType is a cell's type (checked by parseNotebook).
func cellType(c map[string]json.RawMessage) string {
	var t string
	_ = json.Unmarshal(c["cell_type"], &t)
	return t
}

// sourceLines is source in nbformat's list form: lines keeping their "\n".
func sourceLines(source string) json.RawMessage {
	lines := []string{}
	for source != "" {
		i := strings.IndexByte(source, '\n')
		if i < 0 {
			lines = append(lines, source)
			break
		}
		lines = append(lines, source[:i+1])
		source = source[i+1:]
	}
	b, _ := json.Marshal(lines)
	return b
}

// find returns the index of the cell with id, or -1.
func (nb *notebook) find(id string) int {
	for i, c := range nb.cells {
		if cellID(c) == id {
			return i
		}
	}
	return -1
}

// setSource replaces cell i's source, and its type when typ is set. A code
// cell's outputs and execution count describe the old source, so they go.
func (nb *notebook) setSource(i int, source, typ string) {
	c := nb.cells[i]
	c["source"] = sourceLines(source)
	if typ != "" && typ != cellType(c) {
		c["cell_type"], _ = json.Marshal(typ)
	}
	if cellType(c) == "code" {
		c["outputs"], c["execution_count"] = json.RawMessage("[]"), json.RawMessage("null")
	} else {
		delete(c, "outputs")
		delete(c, "execution_count")
	}
}

// insert adds a new cell at i (0 ≤ i ≤ len(cells)).
func (nb *notebook) insert(i int, source, typ string) {
	c := map[string]json.RawMessage{"metadata": json.RawMessage("{}")}
	c["cell_type"], _ = json.Marshal(typ)
	if nb.ids {
		c["id"], _ = json.Marshal(newCellID())
	}
	nb.cells = append(nb.cells[:i], append([]map[string]json.RawMessage{c}, nb.cells[i:]...)...)
	nb.setSource(i, source, "")
}

// remove deletes cell i.
func (nb *notebook) remove(i int) {
	nb.cells = append(nb.cells[:i], nb.cells[i+1:]...)
}

// newCellID is a fresh cell id in nbformat's allowed alphabet.
func newCellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// marshal writes the notebook as Jupyter does: keys sorted, one-space
// indent, a final newline.
func (nb *notebook) marshal() ([]byte, error) {
	all := make(map[string]any, len(nb.fields)+1)
	for k, v := range nb.fields {
		all[k] = v
	}
	all["cells"] = nb.cells
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(all); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
