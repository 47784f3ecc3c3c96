package agenttest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
)

func collect(ch <-chan agent.Chunk) []agent.Chunk {
	var out []agent.Chunk
	for c := range ch {
		out = append(out, c)
	}
	return out
}

func TestScriptedProviderPlaysTurns(t *testing.T) {
	call := agent.ToolCall{ID: "c1", Name: "ls", Arguments: "{}"}
	p := NewScriptedProvider(
		Turn{Text: "thinking aloud", ToolCalls: []agent.ToolCall{call}, Usage: agent.Usage{Prompt: 9, Completion: 4}},
		Turn{Text: "done"},
	)
	ch, err := p.Stream(t.Context(), agent.Request{Model: "m", Messages: []agent.Message{{Role: agent.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	chunks := collect(ch)
	var text string
	var types []agent.ChunkType
	for _, c := range chunks {
		if c.Type == agent.ChunkText {
			text += c.Text
			continue
		}
		types = append(types, c.Type)
	}
	if text != "thinking aloud" || !slices.Equal(types, []agent.ChunkType{agent.ChunkToolCall, agent.ChunkUsage, agent.ChunkDone}) {
		t.Fatalf("text %q, types %v", text, types)
	}
	if last := chunks[len(chunks)-1]; last.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", last.FinishReason)
	}
	if *chunks[len(chunks)-3].ToolCall != call {
		t.Fatalf("call = %+v", chunks[len(chunks)-3].ToolCall)
	}
	ch, _ = p.Stream(t.Context(), agent.Request{})
	if last := collect(ch); last[len(last)-1].FinishReason != "stop" {
		t.Fatalf("second turn: %+v", last)
	}
	if _, err := p.Stream(t.Context(), agent.Request{}); err == nil || !strings.Contains(err.Error(), "script exhausted") {
		t.Fatalf("exhausted: %v", err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[0].Model != "m" || reqs[0].Messages[0].Content != "go" || reqs[2].Step != -1 || reqs[0].Responded.IsZero() {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestScriptedProviderFaults(t *testing.T) {
	tests := []struct {
		turn  Turn
		class error
	}{
		{Fail(429, "slow", 0), agent.ErrRateLimited},
		{Fail(503, "down", 0), agent.ErrTransient},
		{Fail(401, "who", 0), agent.ErrRejected},
		{ContextTooLong(), agent.ErrContextTooLong},
		{Raw("junk"), agent.ErrStream},
		{CutToolCall("x", agent.ToolCall{Name: "w"}), agent.ErrStream},
		{StreamFail("x", "boom"), agent.ErrStream},
	}
	for _, tt := range tests {
		p := NewScriptedProvider(tt.turn)
		ch, err := p.Stream(t.Context(), agent.Request{})
		if err != nil {
			t.Fatal(err)
		}
		chunks := collect(ch)
		last := chunks[len(chunks)-1]
		var pe *agent.ProviderError
		if last.Type != agent.ChunkError || !errors.As(last.Err, &pe) || pe.Class != tt.class {
			t.Errorf("%+v: final %+v, want class %v", tt.turn, last, tt.class)
		}
	}
}

func TestScriptedProviderHonoursCancel(t *testing.T) {
	p := NewScriptedProvider(Turn{Text: "a long answer that will not be read"})
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := p.Stream(ctx, agent.Request{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	collect(ch) // must terminate; goleak checks the goroutine
}

func TestSplitHelpers(t *testing.T) {
	if got := splitN("héllo wörld", 3); strings.Join(got, "") != "héllo wörld" || len(got) != 3 {
		t.Errorf("splitN = %q", got)
	}
	if got := splitN("", 3); got != nil {
		t.Errorf("splitN(\"\") = %q", got)
	}
	if a, b := splitHalf("abab"); a != "abab" || b != "" {
		t.Errorf("an ambiguous split was made: %q %q", a, b)
	}
	if a, b := splitHalf("call_1"); a+b != "call_1" || b == "" {
		t.Errorf("splitHalf(call_1) = %q %q", a, b)
	}
}

func TestScriptedProviderStallEndsOnlyWithTheContext(t *testing.T) {
	p := NewScriptedProvider(Stalled("abc"))
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := p.Stream(ctx, agent.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for text != "abc" {
		c := <-ch
		if c.Type != agent.ChunkText {
			t.Fatalf("chunk %+v before the stall", c)
		}
		text += c.Text
	}
	cancel()
	if rest := collect(ch); len(rest) != 0 {
		t.Fatalf("a stalled turn sent %+v", rest)
	}
}
