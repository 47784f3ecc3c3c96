package builtin

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"reasonix/agent"
)

const (
	grepDefaultMax = 200
	grepHardMax    = 2000
	// grepScanLine is how much of one line is searched; the rest of a longer
	// line (minified code, data) is not.
	grepScanLine = 64 * 1024
	// grepShowLine is how much of a matching line is shown.
	grepShowLine = 400
)

func init() {
	agent.RegisterBuiltin("grep", func(env agent.ToolEnv) agent.Tool { return &grep{env: env} })
}

// grep searches file contents with a regular expression.
type grep struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*grep)(nil)

func (*grep) Name() string   { return "grep" }
func (*grep) ReadOnly() bool { return true }
func (*grep) Description() string {
	return "Search file contents with a regular expression (Go RE2 syntax: no lookaround or backreferences; escape literal dots and parens). " +
		"Searches one file or a whole directory tree, skipping binary files and .git. Prints file:line:text per matching line. " +
		"Narrow the search with glob (e.g. \"*.go\") and path."
}

func (*grep) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression, RE2 syntax, matched against each line."},
    "path": {"type": "string", "description": "File or directory to search, relative to the workspace or absolute. Default: the workspace."},
    "glob": {"type": "string", "description": "Only search files whose name matches, e.g. \"*.go\"; a pattern with / matches the path below the searched directory, e.g. \"src/**/*.ts\"."},
    "case_insensitive": {"type": "boolean", "description": "Ignore letter case. Default false."},
    "max_results": {"type": "integer", "minimum": 1, "description": "Most matching lines to return. Default 200."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	CaseInsensitive bool   `json:"case_insensitive"`
	MaxResults      int    `json:"max_results"`
}

func (t *grep) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a grepArgs
	if err := decodeArgs("grep", raw, &a, "pattern"); err != nil {
		return "", err
	}
	if a.MaxResults < 0 {
		return "", fmt.Errorf("grep: max_results must be 1 or more, got %d", a.MaxResults)
	}
	limit := min(cmp.Or(a.MaxResults, grepDefaultMax), grepHardMax)
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("grep: invalid regular expression (RE2 syntax): %w", err)
	}
	var filter *globPattern
	if a.Glob != "" {
		if filter, err = compileGlob(filepath.ToSlash(a.Glob)); err != nil {
			return "", fmt.Errorf("grep: glob: %w", err)
		}
	}
	root, err := readPath("grep", t.env, cmp.Or(a.Path, "."))
	if err != nil {
		return "", err
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("grep: %w", err)
	}
	s := &grepSearch{env: t.env, re: re, limit: limit}
	if !info.IsDir() {
		// A file named explicitly is searched even if the glob would not match it.
		if err := s.file(ctx, root); err != nil && !errors.Is(err, errGrepFull) {
			return "", fmt.Errorf("grep: %w", err)
		}
	} else {
		err = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return nil // an unreadable subdirectory is left out, not fatal
			}
			if de.IsDir() {
				if p != root && (de.Name() == ".git" || !visible(t.env, p)) {
					return fs.SkipDir
				}
				return nil
			}
			if !de.Type().IsRegular() {
				return nil
			}
			if filter != nil {
				rel, _ := filepath.Rel(root, p)
				subject := filepath.ToSlash(rel)
				if !strings.Contains(a.Glob, "/") {
					subject = de.Name()
				}
				if !filter.match(subject) {
					return nil
				}
			}
			if !visible(t.env, p) {
				return nil
			}
			return s.file(ctx, p)
		})
		if err != nil && !errors.Is(err, errGrepFull) {
			return "", fmt.Errorf("grep: %w", err)
		}
	}
	if s.b.Len() == 0 {
		return "no matches", nil
	}
	if s.full {
		fmt.Fprintf(&s.b, "\n[stopped at %d matching lines; narrow the pattern, path or glob, or raise max_results]", limit)
	}
	return s.b.String(), nil
}

// errGrepFull stops a walk once max_results lines were found.
var errGrepFull = errors.New("result limit reached")

// grepSearch accumulates matching lines across files.
type grepSearch struct {
	env   agent.ToolEnv
	re    *regexp.Regexp
	limit int
	n     int
	full  bool
	b     strings.Builder
}

// file searches one file. Unreadable and binary files are skipped quietly:
// in a tree search they are noise, not errors.
func (s *grepSearch) file(ctx context.Context, p string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64*1024)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil
	}
	if looksBinary(head) {
		return nil
	}
	name := displayPath(s.env, p)
	lr := newLineReader(br, grepScanLine)
	for n := 1; ; n++ {
		line, _, err := lr.next()
		if err != nil {
			return nil // io.EOF, or a read error midway: keep what was found
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		loc := s.re.FindIndex(line)
		if loc == nil {
			continue
		}
		if s.n == s.limit {
			s.full = true
			return errGrepFull
		}
		s.n++
		fmt.Fprintf(&s.b, "%s:%d:%s\n", name, n, excerpt(line, loc[0]))
	}
}

// excerpt shows a long line around the match at offset at, so the model sees
// why it matched without receiving kilobytes of minified code.
func excerpt(line []byte, at int) string {
	if len(line) <= grepShowLine {
		return string(line)
	}
	start := max(0, at-grepShowLine/4)
	end := min(len(line), start+grepShowLine)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	s := string(line[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
