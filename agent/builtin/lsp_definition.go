package builtin

import (
	"context"
	"encoding/json"

	"reasonix/agent"
	"reasonix/internal/lsp"
)

func init() {
	registerLSP("lsp_definition", func(env agent.ToolEnv) agent.Tool { return &lspDefinition{env: env} })
}

// lspDefinition asks the language server where a name is defined.
type lspDefinition struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*lspDefinition)(nil)

func (*lspDefinition) Name() string   { return "lsp_definition" }
func (*lspDefinition) ReadOnly() bool { return true }
func (*lspDefinition) Description() string {
	return "Go to definition through the language server (gopls, for Go files): where the name at a place in a file is declared, " +
		"across packages and the standard library, type-checked — exact where code_index and grep guess. Prints path:line:col and the line."
}
func (*lspDefinition) Schema() json.RawMessage { return lspPointSchema("") }

func (t *lspDefinition) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	s, params, err := lspPoint(ctx, "lsp_definition", t.env, raw)
	if err != nil {
		return "", err
	}
	res, err := lspCall(ctx, "lsp_definition", s, "textDocument/definition", params)
	if err != nil {
		return "", err
	}
	if out := showLocations(t.env, lsp.Locations(res)); out != "" {
		return out, nil
	}
	return "no definition found (is the name spelled as in the file, and the file part of the module?)", nil
}
