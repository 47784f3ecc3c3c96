package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/internal/lsp"
)

func init() {
	registerLSP("lsp_diagnostics", func(env agent.ToolEnv) agent.Tool { return &lspDiagnostics{env: env} })
}

// lspDiagnostics asks the language server what is wrong with a file.
type lspDiagnostics struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*lspDiagnostics)(nil)

func (*lspDiagnostics) Name() string   { return "lsp_diagnostics" }
func (*lspDiagnostics) ReadOnly() bool { return true }
func (*lspDiagnostics) Description() string {
	return "Diagnostics through the language server (gopls, for Go files): the compile errors, vet findings and warnings of a file " +
		"as it is on disk now, without building. Prints path:line:col: severity: message."
}

func (*lspDiagnostics) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Go file, relative to the workspace or absolute."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (t *lspDiagnostics) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := decodeArgs("lsp_diagnostics", raw, &a, "path"); err != nil {
		return "", err
	}
	p, err := lspFile("lsp_diagnostics", t.env, a.Path)
	if err != nil {
		return "", err
	}
	s, err := lspFor(ctx, "lsp_diagnostics", t.env)
	if err != nil {
		return "", err
	}
	uri, text, err := s.sync(p)
	if err != nil {
		return "", fmt.Errorf("lsp_diagnostics: %w", err)
	}
	pub, err := waitDiagnostics(ctx, s, uri)
	if err != nil {
		return "", fmt.Errorf("lsp_diagnostics: %w", err)
	}
	if len(pub.Diagnostics) == 0 {
		return "no diagnostics for " + displayPath(t.env, p), nil
	}
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, d := range pub.Diagnostics {
		if i == lspMaxList {
			fmt.Fprintf(&b, "[%d more not shown]\n", len(pub.Diagnostics)-i)
			break
		}
		col := d.Range.Start.Character + 1
		if n := d.Range.Start.Line; n >= 0 && n < len(lines) {
			col = byteColumn(lines[n], d.Range.Start.Character)
		}
		msg := d.Message
		if d.Source != "" {
			msg += " (" + d.Source + ")"
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s\n", displayPath(t.env, p), d.Range.Start.Line+1, col, lsp.SeverityName(d.Severity), excerpt([]byte(msg), 0))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// waitDiagnostics waits for the server's diagnostics of the document's
// current version, then for as long as it keeps publishing more for it
// (lspDiagQuiet between publications), within lspCallTimeout.
func waitDiagnostics(ctx context.Context, s *lspServer, uri string) (lsp.Published, error) {
	ctx, cancel := context.WithTimeout(ctx, lspCallTimeout)
	defer cancel()
	want := s.version(uri)
	var quiet <-chan time.Time
	for {
		pub, changed := s.conn.Diagnostics(uri)
		current := pub.Seq > 0 && (pub.Version == 0 || pub.Version >= want)
		if current && quiet == nil {
			quiet = time.After(lspDiagQuiet)
		}
		select {
		case <-changed:
			if current {
				quiet = time.After(lspDiagQuiet) // more are coming: wait for the last
			}
		case <-quiet:
			return pub, nil
		case <-s.conn.Done():
			return lsp.Published{}, fmt.Errorf("the language server exited")
		case <-ctx.Done():
			if current {
				return pub, nil
			}
			return lsp.Published{}, fmt.Errorf("no diagnostics from the language server in time: %w", ctx.Err())
		}
	}
}
