package builtin

import (
	"context"
	"encoding/json"

	"reasonix/agent"
	"reasonix/internal/lsp"
)

func init() {
	registerLSP("lsp_references", func(env agent.ToolEnv) agent.Tool { return &lspReferences{env: env} })
}

// lspReferences asks the language server where a name is used.
type lspReferences struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*lspReferences)(nil)

func (*lspReferences) Name() string   { return "lsp_references" }
func (*lspReferences) ReadOnly() bool { return true }
func (*lspReferences) Description() string {
	return "Find references through the language server (gopls, for Go files): every use of the name at a place in a file, " +
		"type-checked across the workspace (a method of one type, not every method of that name). Prints path:line:col and the line, at most 200."
}
func (*lspReferences) Schema() json.RawMessage {
	return lspPointSchema(`,
    "include_declaration": {"type": "boolean", "description": "List the declaration too. Default false."}`)
}

func (t *lspReferences) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	s, params, err := lspPoint(ctx, "lsp_references", t.env, raw)
	if err != nil {
		return "", err
	}
	res, err := lspCall(ctx, "lsp_references", s, "textDocument/references", params)
	if err != nil {
		return "", err
	}
	if out := showLocations(t.env, lsp.Locations(res)); out != "" {
		return out, nil
	}
	return "no references found", nil
}
