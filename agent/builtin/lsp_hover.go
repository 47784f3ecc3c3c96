package builtin

import (
	"context"
	"encoding/json"
	"strings"

	"reasonix/agent"
	"reasonix/internal/lsp"
)

func init() {
	registerLSP("lsp_hover", func(env agent.ToolEnv) agent.Tool { return &lspHover{env: env} })
}

// lspHover asks the language server what a name is.
type lspHover struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*lspHover)(nil)

func (*lspHover) Name() string   { return "lsp_hover" }
func (*lspHover) ReadOnly() bool { return true }
func (*lspHover) Description() string {
	return "Hover through the language server (gopls, for Go files): the type, signature and documentation of the name at a place in a file."
}
func (*lspHover) Schema() json.RawMessage { return lspPointSchema("") }

func (t *lspHover) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	s, params, err := lspPoint(ctx, "lsp_hover", t.env, raw)
	if err != nil {
		return "", err
	}
	res, err := lspCall(ctx, "lsp_hover", s, "textDocument/hover", params)
	if err != nil {
		return "", err
	}
	if text := strings.TrimSpace(lsp.HoverText(res)); text != "" {
		return agent.BoundResult(text, 16*1024), nil
	}
	return "nothing known about that position", nil
}
