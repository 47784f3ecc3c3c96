package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves newServer(testTools) in memory and returns a client session.
func connect(t *testing.T, testTools bool) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newServer(testTools).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "echo" || tool.Name == "wordcount" {
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s is not marked read-only", tool.Name)
			}
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestToolListing(t *testing.T) {
	if got := toolNames(t, connect(t, false)); !slices.Equal(got, []string{"echo", "wordcount"}) {
		t.Errorf("default tools = %v, want echo and wordcount only", got)
	}
	if got := toolNames(t, connect(t, true)); !slices.Equal(got, []string{"crash", "echo", "fail", "progress", "slow", "wordcount"}) {
		t.Errorf("test tools = %v", got)
	}
}

func TestWordcount(t *testing.T) {
	cs := connect(t, false)
	for text, want := range map[string]string{
		"":                 "words=0 lines=0 chars=0",
		"one":              "words=1 lines=1 chars=3",
		"one two\n":        "words=2 lines=1 chars=8",
		"a\n\nb":           "words=2 lines=3 chars=4",
		"héllo  wörld\tx ": "words=3 lines=1 chars=15",
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": text}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != want || res.IsError {
			t.Errorf("wordcount(%q) = %q (isError %v), want %q", text, got, res.IsError, want)
		}
	}
}

func TestPromptAndResource(t *testing.T) {
	cs := connect(t, false)
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
		t.Fatalf("greet = %+v, %v", p, err)
	}
	r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "example://readme"})
	if err != nil || !strings.Contains(r.Contents[0].Text, "echo and wordcount") {
		t.Fatalf("readme = %+v, %v", r, err)
	}
}
