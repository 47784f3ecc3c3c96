package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"reasonix/agent"
)

func encode(t *testing.T, req agent.Request) string {
	t.Helper()
	p, _ := newTestProvider(t, agent.ProviderConfig{Model: "claude-sonnet-4-5"})
	body, err := p.encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	// Round-trip to compare compact, canonical JSON.
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestEncodesConversationWithToolBlocks(t *testing.T) {
	req := agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You are a coding agent."},
			{Role: agent.RoleUser, Content: "fix the build"},
			{Role: agent.RoleAssistant, Content: "Looking.", ToolCalls: []agent.ToolCall{
				{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
				{ID: "toolu_2", Name: "bash", Arguments: `{"command":`}, // malformed: replayed as {}
			}},
			{Role: agent.RoleTool, ToolCallID: "toolu_1", Name: "read_file", Content: "package a"},
			{Role: agent.RoleTool, ToolCallID: "toolu_2", Name: "bash", Content: "invalid arguments"},
			{Role: agent.RoleUser, Content: "also run the tests"},
		},
		Tools: []agent.ToolSchema{
			{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "bash", Description: "Run a command"},
		},
	}
	want := `{"max_tokens":4096,"messages":[` +
		`{"content":[{"text":"fix the build","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Looking.","type":"text"},{"id":"toolu_1","input":{"path":"a.go"},"name":"read_file","type":"tool_use"},{"id":"toolu_2","input":{},"name":"bash","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"package a","tool_use_id":"toolu_1","type":"tool_result"},{"content":"invalid arguments","tool_use_id":"toolu_2","type":"tool_result"},{"cache_control":{"type":"ephemeral"},"text":"also run the tests","type":"text"}],"role":"user"}],` +
		`"model":"claude-sonnet-4-5","stream":true,` +
		`"system":[{"cache_control":{"type":"ephemeral"},"text":"You are a coding agent.","type":"text"}],` +
		`"tools":[{"description":"Read a file","input_schema":{"properties":{"path":{"type":"string"}},"type":"object"},"name":"read_file"},` +
		`{"cache_control":{"type":"ephemeral"},"description":"Run a command","input_schema":{"properties":{},"type":"object"},"name":"bash"}]}`
	if got := encode(t, req); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestEncodesLimitsAndLateSystemMessages(t *testing.T) {
	temp := 0.2
	req := agent.Request{Model: "claude-haiku-4-5", MaxTokens: 1000, Temperature: &temp, Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "hi"},
		{Role: agent.RoleAssistant, Content: ""}, // says nothing: dropped
		{Role: agent.RoleSystem, Content: "The budget is nearly spent."},
	}}
	want := `{"max_tokens":1000,"messages":[{"content":[{"text":"hi","type":"text"},` +
		`{"cache_control":{"type":"ephemeral"},"text":"The budget is nearly spent.","type":"text"}],"role":"user"}],` +
		`"model":"claude-haiku-4-5","stream":true,"temperature":0.2}`
	if got := encode(t, req); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, cfg := range []agent.ProviderConfig{
		{},
		{Model: "m", BaseURL: "ftp://x"},
		{Model: "m", RequestURL: "/v1/messages"},
		{Model: "m", APIKey: "sk\n"},
		{Model: "m", IdleTimeout: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	p, err := agent.Providers.New(agent.ProviderConfig{Kind: Kind, Name: "claude", Model: "m"})
	if err != nil || p.Name() != "claude" || p.(*Provider).client.URL != "https://api.anthropic.com/v1/messages" {
		t.Fatalf("registry: %v, %+v", err, p)
	}
}

func TestToolResultsLeadTheirMessage(t *testing.T) {
	req := agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "go"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "t1", Name: "a", Arguments: "{}"}, {ID: "t2", Name: "b", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: "t1", Content: "one"},
		{Role: agent.RoleUser, Content: "steer: hurry"},
		{Role: agent.RoleTool, ToolCallID: "t2", Content: "two"},
	}}
	want := `{"content":[{"content":"one","tool_use_id":"t1","type":"tool_result"},{"content":"two","tool_use_id":"t2","type":"tool_result"},{"cache_control":{"type":"ephemeral"},"text":"steer: hurry","type":"text"}],"role":"user"}]`
	if got := encode(t, req); !strings.Contains(got, want) {
		t.Fatalf("body %s\nwant suffix %s", got, want)
	}
}
