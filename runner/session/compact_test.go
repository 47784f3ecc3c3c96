package session

import (
	"testing"

	_ "reasonix/agent/openai"
	"reasonix/config"
	"reasonix/goals"
)

// The parent, every goal turn (which copies the parent's config) and every
// sub-agent compact at the same trigger of the model's window.
func TestEveryAgentGetsTheCompactionTrigger(t *testing.T) {
	set := config.Default()
	set.Agent.CompactRatio = 0.7
	s := newSession(t, set, func(c *Config) { c.Model.ContextWindow = 12_000 })
	if s.Agent.ContextWindow != 12_000 || s.Agent.CompactRatio != 0.7 {
		t.Fatalf("parent: window %d ratio %g", s.Agent.ContextWindow, s.Agent.CompactRatio)
	}
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1"}, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	if child.ContextWindow != 12_000 || child.CompactRatio != 0.7 {
		t.Fatalf("sub-agent: window %d ratio %g", child.ContextWindow, child.CompactRatio)
	}
	// A Config built in code without a ratio gets the default.
	set2 := config.Default()
	set2.Agent.CompactRatio = 0
	if s2 := newSession(t, set2, nil); s2.Agent.CompactRatio != config.DefaultCompactRatio {
		t.Fatalf("default ratio %g", s2.Agent.CompactRatio)
	}
}

// The model's own window (model_overrides) is the one its agents use.
func TestResolveModelCarriesTheWindow(t *testing.T) {
	set := config.Default()
	set.Providers = []config.Provider{{Name: "p", Kind: "openai", BaseURL: "http://127.0.0.1:9/v1", Models: []string{"m", "n"},
		ContextWindow: 5000, ModelOverrides: map[string]config.ModelOverride{"m": {ContextWindow: 4000}}}}
	for ref, want := range map[string]int{"p/m": 4000, "p/n": 5000} {
		m, err := ResolveModel(set, ref)
		if err != nil || m.ContextWindow != want {
			t.Fatalf("%s: window %d, %v", ref, m.ContextWindow, err)
		}
	}
}
