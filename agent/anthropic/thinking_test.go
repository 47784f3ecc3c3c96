package anthropic

import (
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// An effort turns extended thinking on with that effort's budget, keeps
// max_tokens above the budget and drops the temperature the API refuses
// with thinking; no effort sends no thinking object.
func TestEffortBecomesAThinkingBudget(t *testing.T) {
	temp := 0.2
	msgs := []agent.Message{{Role: agent.RoleUser, Content: "fix it"}}
	got := encode(t, agent.Request{Messages: msgs, Effort: agent.EffortHigh, Temperature: &temp})
	if !strings.Contains(got, `"thinking":{"budget_tokens":16384,"type":"enabled"}`) ||
		!strings.Contains(got, `"max_tokens":20480`) || strings.Contains(got, "temperature") {
		t.Errorf("high effort body: %s", got)
	}
	got = encode(t, agent.Request{Messages: msgs, Effort: agent.EffortLow, MaxTokens: 32000})
	if !strings.Contains(got, `"budget_tokens":4096`) || !strings.Contains(got, `"max_tokens":32000`) {
		t.Errorf("low effort body: %s", got)
	}
	if got := encode(t, agent.Request{Messages: msgs, Temperature: &temp}); strings.Contains(got, "thinking") || !strings.Contains(got, `"temperature":0.2`) {
		t.Errorf("no effort body: %s", got)
	}
}

// The thinking blocks of an answer come back in its message's state and
// go first, unchanged, in that assistant turn of the next request: the API
// refuses a tool-use turn without them.
func TestThinkingBlocksAreReplayed(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "thinking_tool.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("fix the build"))
	if got.Final.Type != agent.ChunkDone || len(got.Calls) != 1 || got.Text != "" {
		t.Fatalf("final %+v calls %+v text %q", got.Final, got.Calls, got.Text)
	}
	// The readable thinking streams as ChunkThinking; the redacted block
	// has nothing to show.
	if got.Thinking != "The build fails in a.go; read it first." {
		t.Errorf("streamed thinking %q", got.Thinking)
	}
	state := got.Final.ProviderState
	body := encode(t, agent.Request{Effort: agent.EffortMedium, Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "fix the build"},
		{Role: agent.RoleAssistant, ToolCalls: got.Calls, ProviderState: state},
		{Role: agent.RoleTool, ToolCallID: "toolu_01Rd", Name: "read_file", Content: "package a"},
	}})
	want := `{"content":[{"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds","thinking":"The build fails in a.go; read it first.","type":"thinking"},` +
		`{"data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP","type":"redacted_thinking"},` +
		`{"id":"toolu_01Rd","input":{"path":"a.go"},"name":"read_file","type":"tool_use"}],"role":"assistant"}`
	if !strings.Contains(body, want) {
		t.Errorf("assistant turn not replayed with its thinking first:\n%s", body)
	}
	// Another provider's state is not mistaken for thinking.
	body = encode(t, agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "q"},
		{Role: agent.RoleAssistant, Content: "a", ProviderState: []byte(`{"kind":"responses","reasoning":[{}]}`)},
	}})
	if strings.Contains(body, "thinking") {
		t.Errorf("foreign state replayed: %s", body)
	}
}
