package agent_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"reasonix/agent"
)

func TestProviderRegistry(t *testing.T) {
	r := agent.NewProviderRegistry()
	r.Register("openai", func(cfg agent.ProviderConfig) (agent.Provider, error) { return &script{}, nil })
	r.Register("anthropic", func(cfg agent.ProviderConfig) (agent.Provider, error) { return &script{}, nil })
	if _, err := r.New(agent.ProviderConfig{Name: "x", Kind: "openai"}); err != nil {
		t.Fatal(err)
	}
	_, err := r.New(agent.ProviderConfig{Name: "x", Kind: "gemini"})
	if err == nil || !strings.Contains(err.Error(), `"gemini"`) || !strings.Contains(err.Error(), "anthropic, openai") {
		t.Errorf("unknown kind error = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate kind did not panic")
		}
	}()
	r.Register("openai", func(cfg agent.ProviderConfig) (agent.Provider, error) { return nil, nil })
}

func TestToolRegistry(t *testing.T) {
	r := agent.NewToolRegistry()
	b := &fakeTool{name: "b", fn: nil}
	a := &fakeTool{name: "a", readOnly: true}
	if err := r.Add(b); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(a); err == nil {
		t.Error("duplicate tool accepted")
	}
	s := r.Schemas()
	if len(s) != 2 || s[0].Name != "a" || s[1].Name != "b" {
		t.Errorf("schemas not sorted: %+v", s)
	}
	if !agent.IsReadOnly(a) || agent.IsReadOnly(b) {
		t.Error("read-only marker misread")
	}
}

func TestCanonicalSchema(t *testing.T) {
	got, err := agent.CanonicalSchema(json.RawMessage(`{ "type": "object", "required":["b"], "properties": {"b":{"type":"string"},"a":{"type":"integer"}} }`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"type":"object"}`
	if string(got) != want {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{`[]`, `{"type":"string"}`, `{`} {
		if _, err := agent.CanonicalSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestBoundResult(t *testing.T) {
	if got := agent.BoundResult("short", 100); got != "short" {
		t.Errorf("short result changed: %q", got)
	}
	big := strings.Repeat("héllo wörld ", 20000) // multi-byte runes at many offsets
	got := agent.BoundResult(big, agent.MaxToolResult)
	if len(got) > agent.MaxToolResult {
		t.Fatalf("bounded result is %d bytes", len(got))
	}
	if !utf8.ValidString(got) {
		t.Error("bounded result split a rune")
	}
	if !strings.Contains(got, "bytes cut") || !strings.HasPrefix(got, "héllo") || !strings.HasSuffix(got, "wörld ") {
		t.Errorf("marker or head/tail missing: %q...", got[:80])
	}
	// Bounding is done once: a bounded result passes through unchanged.
	if again := agent.BoundResult(got, agent.MaxToolResult); again != got {
		t.Error("bounding twice changed the result")
	}
}

func FuzzBoundResult(f *testing.F) {
	f.Add("abc", 10)
	f.Add(strings.Repeat("日本語", 500), 300)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 0 || limit > 1<<20 {
			return
		}
		got := agent.BoundResult(s, limit)
		if len(got) > max(limit, 0) && len(s) > limit {
			t.Fatalf("len %d > limit %d", len(got), limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid input")
		}
	})
}
