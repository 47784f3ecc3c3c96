package openai

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestRequestWireFormat(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "a"}, agenttest.Turn{Text: "b"})
	cfg := srv.ProviderConfig()
	cfg.APIKey = testKey
	p, _ := newTestProvider(t, cfg)
	temp := 0.0
	req := agent.Request{
		Model: "override-model",
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "be brief"},
			{Role: agent.RoleUser, Content: "list files"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}, {ID: "call_2", Name: "pwd"}}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: "a.go\nb.go"},
			{Role: agent.RoleTool, ToolCallID: "call_2", Content: "/w"},
		},
		Tools: []agent.ToolSchema{
			{Name: "ls", Description: "list a directory", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "pwd", Description: "print the directory"},
		},
		Temperature: &temp,
		MaxTokens:   512,
	}
	agenttest.Collect(t, p, req)
	agenttest.Collect(t, p, agenttest.UserRequest("plain")) // no tools, no temperature, default model

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server saw %d requests", len(reqs))
	}
	first := reqs[0]
	if first.Path != "/v1/chat/completions" || first.Authorization != "Bearer "+testKey {
		t.Errorf("path %q auth %q", first.Path, first.Authorization)
	}
	if first.Model != "override-model" || !first.Stream || !first.IncludeUsage || first.MaxTokens != 512 {
		t.Errorf("model %q stream %v usage %v max %d", first.Model, first.Stream, first.IncludeUsage, first.MaxTokens)
	}
	if first.Temperature == nil || *first.Temperature != 0 {
		t.Errorf("temperature 0 was not sent: %v", first.Temperature)
	}
	wantMsgs := slices.Clone(req.Messages)
	wantMsgs[2].ToolCalls = []agent.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}, {ID: "call_2", Name: "pwd", Arguments: "{}"}}
	if len(first.Messages) != len(wantMsgs) {
		t.Fatalf("messages = %+v", first.Messages)
	}
	for i := range wantMsgs {
		g, w := first.Messages[i], wantMsgs[i]
		if g.Role != w.Role || g.Content != w.Content || g.ToolCallID != w.ToolCallID || !slices.Equal(g.ToolCalls, w.ToolCalls) {
			t.Errorf("message %d = %+v, want %+v", i, g, w)
		}
	}
	if len(first.Tools) != 2 || first.Tools[0].Name != "ls" || first.Tools[1].Description != "print the directory" ||
		string(first.Tools[1].Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("tools = %+v", first.Tools)
	}
	// Exact wire shapes the decoded view hides.
	body := string(first.Body)
	for _, want := range []string{`"type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}`,
		`"role":"assistant","content":null,"tool_calls"`, `"tool_call_id":"call_1"`, `"stream_options":{"include_usage":true}`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}

	second := reqs[1]
	if second.Model != "fake-model" || second.Temperature != nil || second.MaxTokens != 0 {
		t.Errorf("second request: model %q temperature %v max %d", second.Model, second.Temperature, second.MaxTokens)
	}
	for _, absent := range []string{`"tools"`, `"temperature"`, `"max_tokens"`} {
		if strings.Contains(string(second.Body), absent) {
			t.Errorf("second body has %s: %s", absent, second.Body)
		}
	}
}

func TestNoAuthorizationWithoutKey(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "a"})
	cfg := srv.ProviderConfig()
	cfg.APIKey = ""
	p, _ := newTestProvider(t, cfg)
	agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if auth := srv.Requests()[0].Authorization; auth != "" {
		t.Fatalf("Authorization = %q, want none", auth)
	}
}

func TestRequestURLOverridesBaseURL(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "a"})
	cfg := srv.ProviderConfig()
	cfg.BaseURL = "http://unused.invalid/v1"
	cfg.RequestURL = strings.TrimSuffix(srv.URL, "/v1") + "/proxy/openai/chat/completions"
	p, _ := newTestProvider(t, cfg)
	if got := agenttest.Collect(t, p, agenttest.UserRequest("x")); got.Text != "a" {
		t.Fatalf("text = %q", got.Text)
	}
	if path := srv.Requests()[0].Path; path != "/proxy/openai/chat/completions" {
		t.Fatalf("path = %q", path)
	}
}
