package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("delete_range", func(env agent.ToolEnv) agent.Tool { return &deleteRange{env: env} })
}

// deleteRange removes a range of whole lines from a text file: the cheap
// way to drop a block the model has just read, without repeating it as an
// edit_file old_string.
type deleteRange struct{ env agent.ToolEnv }

func (*deleteRange) Name() string { return "delete_range" }
func (*deleteRange) Description() string {
	return "Delete whole lines start_line..end_line (1-based, inclusive, as read_file numbers them) from a text file. " +
		"Read the file first: a file not read since it last changed is refused. To remove a Go declaration by name use delete_symbol."
}

func (*deleteRange) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to change, relative to the workspace or absolute."},
    "start_line": {"type": "integer", "minimum": 1, "description": "First line to delete, 1-based."},
    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to delete, inclusive; at least start_line."}
  },
  "required": ["path", "start_line", "end_line"],
  "additionalProperties": false
}`)
}

type deleteRangeArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

func (t *deleteRange) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a deleteRangeArgs
	if err := decodeArgs("delete_range", raw, &a, "path", "start_line", "end_line"); err != nil {
		return "", err
	}
	if a.StartLine < 1 || a.EndLine < a.StartLine {
		return "", fmt.Errorf("delete_range: need 1 <= start_line <= end_line, got %d..%d", a.StartLine, a.EndLine)
	}
	p, err := writePath("delete_range", t.env, a.Path)
	if err != nil {
		return "", err
	}
	data, perm, err := readTextFile(ctx, t.env, "delete_range", a.Path, p)
	if err != nil {
		return "", err
	}
	if err := checkSeen("delete_range", t.env, a.Path, p); err != nil {
		return "", err
	}
	start, end, n := lineSpan(data, a.StartLine, a.EndLine)
	if n < a.EndLine {
		return "", fmt.Errorf("delete_range: %s has %s; end_line %d is past its end", a.Path, plural(n, "line"), a.EndLine)
	}
	out := append(bytes.Clone(data[:start]), data[end:]...)
	if err := writeText(ctx, t.env, p, out, perm); err != nil {
		return "", fmt.Errorf("delete_range: %w", err)
	}
	sawFile(t.env, p)
	return fmt.Sprintf("deleted %s (lines %d-%d) from %s; it now has %s",
		plural(a.EndLine-a.StartLine+1, "line"), a.StartLine, a.EndLine, displayPath(t.env, p), plural(countLines(out), "line")), nil
}

// lineSpan returns the byte range [start, end) of lines first..last
// (1-based, inclusive) of data, each with its line ending, and how many
// lines data has up to last (fewer than last when data is shorter). A
// last line without a newline counts as a line.
func lineSpan(data []byte, first, last int) (start, end, lines int) {
	start, end = len(data), len(data)
	off := 0
	for line := 1; off < len(data); line++ {
		if line == first {
			start = off
		}
		next := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		lines = line
		off = next
		if line == last {
			end = off
			break
		}
	}
	return start, end, lines
}

// countLines counts the lines of data, a last line without a newline
// included.
func countLines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}
