// Package mcptest serves fake MCP servers for tests of code that uses
// package mcp, such as the CLI's plugin wiring, without building or spawning
// a plugin binary. Import it only from _test.go files.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"reasonix/mcp"
)

// Tool is one tool of a fake server.
type Tool struct {
	Name        string
	Description string
	ReadOnly    bool
	// Handle answers a call. Its error becomes an isError result, which
	// the mcp adapter returns to the model as an error. Nil echoes the
	// arguments as JSON.
	Handle func(ctx context.Context, args map[string]any) (string, error)
}

// NewHTTPServer serves tools over streamable HTTP on loopback until the test
// ends and returns a ServerConfig, named name, that reaches it.
func NewHTTPServer(t testing.TB, name string, tools ...Tool) mcp.ServerConfig {
	t.Helper()
	return NewHTTPPromptServer(t, name, nil, tools...)
}

// Prompt is one prompt of a fake server.
type Prompt struct {
	Name        string
	Description string
	Arguments   []string // all required
	// Text renders the prompt's one message from its arguments.
	Text func(args map[string]string) string
}

// NewHTTPPromptServer is NewHTTPServer with prompts as well as tools.
func NewHTTPPromptServer(t testing.TB, name string, prompts []Prompt, tools ...Tool) mcp.ServerConfig {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: "test"}, nil)
	for _, p := range prompts {
		decl := &sdk.Prompt{Name: p.Name, Description: p.Description}
		for _, a := range p.Arguments {
			decl.Arguments = append(decl.Arguments, &sdk.PromptArgument{Name: a, Required: true})
		}
		srv.AddPrompt(decl, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{
				Role: "user", Content: &sdk.TextContent{Text: p.Text(req.Params.Arguments)},
			}}}, nil
		})
	}
	for _, tool := range tools {
		srv.AddTool(&sdk.Tool{
			Name:        tool.Name,
			Description: tool.Description,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: tool.ReadOnly},
		}, handler(tool))
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return mcp.ServerConfig{Name: name, Type: mcp.TypeHTTP, URL: ts.URL}
}

func handler(tool Tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult("arguments are not a JSON object"), nil
			}
		}
		if tool.Handle == nil {
			raw, _ := json.Marshal(args)
			return textResult(string(raw)), nil
		}
		out, err := tool.Handle(ctx, args)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		return textResult(out), nil
	}
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func errorResult(s string) *sdk.CallToolResult {
	r := textResult(s)
	r.IsError = true
	return r
}
