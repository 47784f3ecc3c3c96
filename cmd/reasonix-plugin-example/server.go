package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newServer builds the MCP server with its tools, prompt and resource.
func newServer(testTools bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "reasonix-plugin-example", Version: "v0.1.0"}, nil)

	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		Annotations: readOnly,
	}, echo)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "wordcount",
		Description: "Counts the words, lines and characters of text.",
		Annotations: readOnly,
	}, wordcount)

	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "Asks the model to greet someone.",
		Arguments:   []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, greet)
	s.AddResource(&mcp.Resource{
		URI:         "example://readme",
		Name:        "readme",
		Description: "What this plugin is for.",
		MIMEType:    "text/plain",
	}, readme)

	if testTools {
		addTestTools(s)
	}
	return s
}

type textArgs struct {
	Text string `json:"text" jsonschema:"the text to work on"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

// Counts is the structured result of wordcount.
type Counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

func wordcount(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, Counts, error) {
	c := Counts{Words: len(strings.Fields(in.Text)), Chars: utf8.RuneCountInString(in.Text)}
	if in.Text != "" {
		// Like wc -l, but a last line without a newline still counts.
		c.Lines = strings.Count(in.Text, "\n")
		if !strings.HasSuffix(in.Text, "\n") {
			c.Lines++
		}
	}
	text := fmt.Sprintf("words=%d lines=%d chars=%d", c.Words, c.Lines, c.Chars)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, c, nil
}

func greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{
		Description: "greeting",
		Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: "Please greet " + req.Params.Arguments["name"] + " warmly."},
		}},
	}, nil
}

func readme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      req.Params.URI,
		MIMEType: "text/plain",
		Text:     "reasonix-plugin-example: a reference MCP server with echo and wordcount tools.\n",
	}}}, nil
}

type slowArgs struct {
	Millis int `json:"millis" jsonschema:"how long to sleep, in milliseconds"`
}

type progressArgs struct {
	Steps int `json:"steps" jsonschema:"how many progress notifications to send"`
}

// slowInFlight counts slow calls that are running.
var slowInFlight atomic.Int64

// addTestTools adds tools that misbehave on purpose, for the client's tests.
func addTestTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server process at once (tests only)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crash tool called: exiting with status 3")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "slow",
		Description: "Sleeps for millis milliseconds, then answers (tests only).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
		// Report how many slow calls overlapped this one, so a client's test
		// can prove its serial policy from the server's side.
		concurrent := slowInFlight.Add(1)
		defer slowInFlight.Add(-1)
		t := time.NewTimer(time.Duration(in.Millis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if peak := slowInFlight.Load(); peak > concurrent {
			concurrent = peak
		}
		text := fmt.Sprintf("slept %dms concurrent=%d", in.Millis, concurrent)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "progress",
		Description: "Sends steps progress notifications, then answers (tests only).",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in progressArgs) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps && token != nil; i++ {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(i),
				Total:         float64(in.Steps),
				Message:       fmt.Sprintf("step %d", i),
			})
			if err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d steps", in.Steps)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "fail",
		Description: "Always answers with isError set (tests only).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)},
	}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed on purpose"}}}, nil, nil
	})
}
