package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's prompts are listed as mcp__<server>__<prompt> commands and
// rendered with positional arguments; a server without prompts adds none.
func TestPromptsListAndRender(t *testing.T) {
	withPrompts := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "v0"}, nil)
	withPrompts.AddPrompt(&sdk.Prompt{Name: "summarize", Description: "Summarize a file",
		Arguments: []*sdk.PromptArgument{{Name: "path", Required: true}, {Name: "focus"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Summarize " + a["path"]}},
				{Role: "user", Content: &sdk.TextContent{Text: "Focus: " + a["focus"]}},
			}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return withPrompts }, nil))
	t.Cleanup(ts.Close)
	plain := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return inProcessServer() }, nil))
	t.Cleanup(plain.Close)

	m, _ := startManager(t, Config{Servers: []ServerConfig{
		{Name: "docs", Type: TypeHTTP, URL: ts.URL},
		{Name: "plain", Type: TypeHTTP, URL: plain.URL},
	}})
	ctx := t.Context()
	ps := m.Prompts(ctx)
	if len(ps) != 1 || ps[0].Command() != "mcp__docs__summarize" || ps[0].Description != "Summarize a file" ||
		len(ps[0].Arguments) != 2 || ps[0].ArgumentHint != "<path> [focus]" {
		t.Fatalf("prompts = %+v", ps)
	}
	text, found, err := m.GetPrompt(ctx, "mcp__docs__summarize", []string{"main.go", "error", "handling"})
	if err != nil || !found {
		t.Fatalf("GetPrompt: %v %v", found, err)
	}
	if want := "Summarize main.go\n\nFocus: error handling"; text != want {
		t.Fatalf("text = %q, want %q", text, want)
	}
	if _, found, _ := m.GetPrompt(ctx, "mcp__docs__nope", nil); found {
		t.Fatal("an unknown prompt was found")
	}
}
