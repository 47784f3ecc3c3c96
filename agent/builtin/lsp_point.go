package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"reasonix/agent"
	"reasonix/internal/lsp"
)

// lspPointSchema is the argument schema of the tools that ask about one
// place in a file; extra adds properties.
func lspPointSchema(extra string) json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Go file, relative to the workspace or absolute."},
    "line": {"type": "integer", "minimum": 1, "description": "Line of the name, 1-based as read_file numbers lines."},
    "symbol": {"type": "string", "description": "The name on that line to ask about (its first whole-word occurrence). Give this or column."},
    "column": {"type": "integer", "minimum": 1, "description": "1-based byte column of the name on the line, instead of symbol."}` + extra + `
  },
  "required": ["path", "line"],
  "additionalProperties": false
}`)
}

type lspPointArgs struct {
	Path               string `json:"path"`
	Line               int    `json:"line"`
	Symbol             string `json:"symbol"`
	Column             int    `json:"column"`
	IncludeDeclaration bool   `json:"include_declaration"`
}

// lspPoint resolves a call's file and position and brings the run's
// server up to date with the file.
func lspPoint(ctx context.Context, tool string, env agent.ToolEnv, raw json.RawMessage) (*lspServer, map[string]any, error) {
	var a lspPointArgs
	if err := decodeArgs(tool, raw, &a, "path", "line"); err != nil {
		return nil, nil, err
	}
	if a.Symbol == "" && a.Column == 0 {
		return nil, nil, fmt.Errorf("%s: give symbol (the name on the line) or column", tool)
	}
	p, err := lspFile(tool, env, a.Path)
	if err != nil {
		return nil, nil, err
	}
	s, err := lspFor(ctx, tool, env)
	if err != nil {
		return nil, nil, err
	}
	uri, text, err := s.sync(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", tool, err)
	}
	pos, err := lspPosition(text, a.Line, a.Symbol, a.Column)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", tool, a.Path, err)
	}
	params := map[string]any{"textDocument": map[string]string{"uri": uri}, "position": pos}
	if tool == "lsp_references" {
		params["context"] = map[string]bool{"includeDeclaration": a.IncludeDeclaration}
	}
	return s, params, nil
}

// lspFile resolves a Go file the tools may read.
func lspFile(tool string, env agent.ToolEnv, name string) (string, error) {
	p, err := readPath(tool, env, name)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(p, ".go") {
		return "", fmt.Errorf("%s: %s is not a Go file; the language server installed here (gopls) serves Go only", tool, name)
	}
	if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %s is not a readable file", tool, name)
	}
	return p, nil
}

// lspCall asks the server, bounded in time.
func lspCall(ctx context.Context, tool string, s *lspServer, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, lspCallTimeout)
	defer cancel()
	var raw json.RawMessage
	if err := s.conn.Call(ctx, method, params, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return raw, nil
}

// showLocations lists locations as path:line:col and the line's text,
// leaving out what the policy hides from readers.
func showLocations(env agent.ToolEnv, locs []lsp.Location) string {
	var b strings.Builder
	files := map[string][]string{}
	hidden, shown := 0, 0
	for _, l := range locs {
		p := uriPath(l.URI)
		if p == "" {
			continue
		}
		if !visible(env, p) {
			hidden++
			continue
		}
		if shown == lspMaxList {
			fmt.Fprintf(&b, "[%d more not shown]\n", len(locs)-hidden-shown)
			break
		}
		shown++
		lines, ok := files[p]
		if !ok {
			if data, err := os.ReadFile(p); err == nil && !looksBinary(data) {
				lines = strings.Split(string(data), "\n")
			}
			files[p] = lines
		}
		text, col := "", l.Range.Start.Character+1
		if n := l.Range.Start.Line; n >= 0 && n < len(lines) {
			text, col = strings.TrimSpace(lines[n]), byteColumn(lines[n], l.Range.Start.Character)
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s\n", displayPath(env, p), l.Range.Start.Line+1, col, excerpt([]byte(text), 0))
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[%d locations the policy hides from readers are left out]\n", hidden)
	}
	return strings.TrimRight(b.String(), "\n")
}
