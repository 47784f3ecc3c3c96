package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"reasonix/agent"
)

const (
	readDefaultLimit = 2000
	readMaxLineBytes = 2000
	// readMaxBytes keeps one window under agent.MaxToolResult, so the
	// harness never has to cut lines out of the middle of a window; the
	// trailer tells the model where to continue instead.
	readMaxBytes = 30 * 1024
)

func init() {
	agent.RegisterBuiltin("read_file", func(env agent.ToolEnv) agent.Tool { return &readFile{env: env} })
}

// readFile shows a window of a text file with line numbers.
type readFile struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*readFile)(nil)

func (*readFile) Name() string   { return "read_file" }
func (*readFile) ReadOnly() bool { return true }
func (*readFile) Description() string {
	return "Read a text file. Returns numbered lines (line number, tab, text). Reads up to 2000 lines from offset (1-based); " +
		"when more remains the result ends with the offset to continue from. Prefer reading the part you need over the whole of a large file. " +
		"Directories (use ls) and binary files are refused."
}

func (*readFile) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read, relative to the workspace or absolute."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

type readFileArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (t *readFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a readFileArgs
	if err := decodeArgs("read_file", raw, &a, "path"); err != nil {
		return "", err
	}
	if a.Offset < 0 {
		return "", fmt.Errorf("read_file: offset must be 1 or more, got %d", a.Offset)
	}
	if a.Limit < 0 {
		return "", fmt.Errorf("read_file: limit must be 1 or more, got %d", a.Limit)
	}
	first := max(a.Offset, 1)
	limit := a.Limit
	if limit == 0 {
		limit = readDefaultLimit
	}
	p, err := readPath("read_file", t.env, a.Path)
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	if info.IsDir() {
		return "", fmt.Errorf("read_file: %s is a directory; use ls to list it", a.Path)
	}
	var src io.Reader = f
	if t.env.Files != nil {
		// The editor's buffer, unsaved changes included; the checks above
		// and the version recorded are the file's own.
		text, err := t.env.Files.ReadText(ctx, p)
		if err != nil {
			return "", fmt.Errorf("read_file: %w", err)
		}
		src = strings.NewReader(text)
	}
	br := bufio.NewReaderSize(src, 64*1024)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("read_file: %w", err)
	}
	if looksBinary(head) {
		return "", fmt.Errorf("read_file: %s looks like a binary file (it contains NUL bytes); it cannot be shown as text", a.Path)
	}
	if len(head) == 0 {
		t.saw(p, info)
		return fmt.Sprintf("(%s is empty)", a.Path), nil
	}
	out, err := readWindow(ctx, br, a.Path, first, limit)
	if err == nil {
		t.saw(p, info)
	}
	return out, err
}

// saw records the version the call read (as the open file's stat gave it
// before reading), so the file may now be edited in place. Any window
// counts: the model knows where to read more before it edits.
func (t *readFile) saw(path string, info os.FileInfo) {
	if t.env.Observed != nil {
		t.env.Observed.Saw(path, versionOf(info))
	}
}

// readWindow renders lines [first, first+limit) of r, stopping early when the
// window would exceed readMaxBytes, and counts the remaining lines so the
// trailer can say how much is left.
func readWindow(ctx context.Context, r io.Reader, name string, first, limit int) (string, error) {
	lr := newLineReader(r, readMaxLineBytes)
	var b strings.Builder
	n, last := 0, 0 // lines read so far, last line shown
	full := false   // the byte budget ended the window early
	for {
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read_file: %w", err)
		}
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			return "", fmt.Errorf("read_file: %w", ctx.Err())
		}
		if n < first || n >= first+limit || full {
			continue
		}
		entry := fmt.Sprintf("%6d\t%s", n, line)
		if cut > 0 {
			entry += fmt.Sprintf(" [... line cut: %d more bytes]", cut)
		}
		if b.Len()+len(entry)+1 > readMaxBytes && last > 0 {
			full = true
			continue
		}
		b.WriteString(entry)
		b.WriteByte('\n')
		last = n
	}
	if first > n {
		return "", fmt.Errorf("read_file: offset %d is past the end of %s, which has %d lines", first, name, n)
	}
	if last < n {
		why := ""
		if full {
			why = " (the output size limit ended this window)"
		}
		fmt.Fprintf(&b, "\n[showing lines %d-%d of %d%s; call read_file with offset=%d to read on]", first, last, n, why, last+1)
	}
	return b.String(), nil
}
