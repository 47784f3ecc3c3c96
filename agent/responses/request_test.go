package responses

import (
	"encoding/json"
	"testing"

	"reasonix/agent"
)

func encode(t *testing.T, req agent.Request) string {
	t.Helper()
	p, _ := newTestProvider(t, agent.ProviderConfig{Model: "gpt-4.1"})
	body, err := p.encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestEncodesConversationAsItems(t *testing.T) {
	temp := 0.5
	req := agent.Request{
		Model: "o4-mini", MaxTokens: 2000, Temperature: &temp,
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You are a coding agent."},
			{Role: agent.RoleSystem, Content: "Work in /repo."},
			{Role: agent.RoleUser, Content: "fix it"},
			{Role: agent.RoleAssistant, Content: "Reading.", ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "read_file", Arguments: ""}},
				ProviderState: json.RawMessage(`{"kind":"anthropic","reasoning":[{"type":"reasoning"}]}`)}, // not ours: ignored
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: ""},
			{Role: agent.RoleSystem, Content: "Budget nearly spent."},
		},
		Tools: []agent.ToolSchema{{Name: "read_file", Description: "Read a file"}},
	}
	want := `{"include":["reasoning.encrypted_content"],"input":[` +
		`{"content":"fix it","role":"user","type":"message"},` +
		`{"content":"Reading.","role":"assistant","type":"message"},` +
		`{"arguments":"{}","call_id":"call_1","name":"read_file","type":"function_call"},` +
		`{"call_id":"call_1","output":"","type":"function_call_output"},` +
		`{"content":"Budget nearly spent.","role":"system","type":"message"}],` +
		`"instructions":"You are a coding agent.\n\nWork in /repo.","max_output_tokens":2000,"model":"o4-mini","store":false,"stream":true,"temperature":0.5,` +
		`"tools":[{"description":"Read a file","name":"read_file","parameters":{"properties":{},"type":"object"},"strict":false,"type":"function"}]}`
	if got := encode(t, req); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, cfg := range []agent.ProviderConfig{
		{},
		{Model: "m", BaseURL: "api.openai.com"},
		{Model: "m", RequestURL: "ftp://x/responses"},
		{Model: "m", APIKey: "sk\r"},
		{Model: "m", IdleTimeout: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	p, err := agent.Providers.New(agent.ProviderConfig{Kind: Kind, Name: "oai", Model: "m"})
	if err != nil || p.Name() != "oai" || p.(*Provider).client.URL != "https://api.openai.com/v1/responses" {
		t.Fatalf("registry: %v, %+v", err, p)
	}
}
