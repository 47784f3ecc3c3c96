package builtin

import (
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// testHistory is the past of testEnv's workspace: t_1 (oldest) and t_2.
func testHistory() *agenttest.History {
	at := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	return &agenttest.History{Tasks: []agenttest.HistoryTask{
		{Info: agent.SessionInfo{ID: "t_1", State: "succeeded", Requester: "slack:T1:U1", Prompt: "fix the flaky\nTestQueue", Created: at},
			Messages: []agent.Message{
				{Role: agent.RoleUser, Content: "fix the flaky TestQueue"},
				{Role: agent.RoleAssistant, Content: "", ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./queue"}`}}},
				{Role: agent.RoleTool, ToolCallID: "c1", Content: strings.Repeat("ok ", 2000)},
				{Role: agent.RoleAssistant, Content: "The race was in the claim loop."},
			}},
		{Info: agent.SessionInfo{ID: "t_2", State: "failed", Requester: "token:ci", Prompt: "bump the go version", Created: at.Add(time.Hour)}},
	}}
}

func TestRememberThenRecallThenForget(t *testing.T) {
	env, _ := testEnv(t)
	out := mustCall(t, tool(t, env, "remember"), map[string]any{"text": "Tests run with make check"})
	if !strings.Contains(out, "mem_1") || !strings.Contains(out, "workspace") {
		t.Errorf("remember = %q", out)
	}
	mustCall(t, tool(t, env, "remember"), map[string]any{"text": "Answer in French", "scope": "user"})
	out = mustCall(t, tool(t, env, "memory"), map[string]any{"query": "make"})
	if !strings.Contains(out, "mem_1 [workspace] Tests run with make check") || strings.Contains(out, "French") {
		t.Errorf("memory(make) = %q", out)
	}
	out = mustCall(t, tool(t, env, "memory"), map[string]any{})
	if strings.Index(out, "mem_2") > strings.Index(out, "mem_1") {
		t.Errorf("memory() is not newest first: %q", out)
	}
	mustCall(t, tool(t, env, "forget"), map[string]any{"id": "mem_1"})
	if out := mustCall(t, tool(t, env, "memory"), map[string]any{"query": "make"}); !strings.Contains(out, "No memory matches") {
		t.Errorf("after forget, memory(make) = %q", out)
	}
}

func TestRememberPassesTheRefusalOn(t *testing.T) {
	env, _ := testEnv(t)
	env.Memory = &agenttest.Memory{Refuse: "sk-live-123"}
	_, err := call(t, tool(t, env, "remember"), map[string]any{"text": "the key is sk-live-123"})
	if err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("remember of a secret = %v", err)
	}
	if out := mustCall(t, tool(t, env, "memory"), map[string]any{}); !strings.Contains(out, "Nothing is remembered") {
		t.Errorf("the refused text was kept: %q", out)
	}
}

func TestMemoryAndHistoryToolsNeedTheirBackends(t *testing.T) {
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(agent.ToolEnv{Workdir: t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"remember", "forget", "memory", "list_sessions", "read_session", "history"} {
		if _, ok := r.Get(name); ok {
			t.Errorf("%s is offered to a run without its backend", name)
		}
	}
	if _, ok := r.Get("read_file"); !ok {
		t.Error("read_file was left out too")
	}
}

func TestHistoryTools(t *testing.T) {
	env, _ := testEnv(t)
	out := mustCall(t, tool(t, env, "list_sessions"), map[string]any{})
	if strings.Index(out, "t_2") > strings.Index(out, "t_1") || !strings.Contains(out, "fix the flaky TestQueue") {
		t.Errorf("list_sessions = %q", out)
	}
	out = mustCall(t, tool(t, env, "list_sessions"), map[string]any{"limit": 1})
	if !strings.Contains(out, `before="t_2"`) || strings.Contains(out, "t_1 ") {
		t.Errorf("list_sessions(limit 1) = %q", out)
	}
	out = mustCall(t, tool(t, env, "history"), map[string]any{"query": "claim loop"})
	if !strings.HasPrefix(out, "t_1 ") || !strings.Contains(out, "The race was in the claim loop.") {
		t.Errorf("history = %q", out)
	}
	out = mustCall(t, tool(t, env, "read_session"), map[string]any{"id": "t_1", "offset": 1, "limit": 2})
	if !strings.Contains(out, "messages 1–3 of 4") || !strings.Contains(out, `call bash({"command":"go test ./queue"})`) ||
		!strings.Contains(out, "bytes cut") || !strings.Contains(out, "(more: offset=3)") {
		t.Errorf("read_session = %q", out)
	}
	if len(out) > 4*readSessionMaxChars {
		t.Errorf("read_session returned %d bytes for two messages", len(out))
	}
}
