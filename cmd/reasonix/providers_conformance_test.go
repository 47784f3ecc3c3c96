package main

import (
	"slices"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestEveryProviderKindKeepsTheContract runs the provider conformance suite
// over every kind the binary registers, each against the fake that speaks
// its wire, built through the registry as a configuration builds it. A new
// kind cannot ship without a fake and a passing run.
func TestEveryProviderKindKeepsTheContract(t *testing.T) {
	kinds := agent.Providers.Kinds()
	if len(kinds) == 0 {
		t.Fatal("no provider kind is registered")
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			if !slices.Contains(agenttest.Kinds(), kind) {
				t.Fatalf("provider kind %q has no fake in agenttest (fakes: %v): add one", kind, agenttest.Kinds())
			}
			agenttest.TestProviderFor(t, kind, func(t *testing.T, cfg agent.ProviderConfig) agent.Provider {
				cfg.Kind = kind
				p, err := agent.Providers.New(cfg)
				if err != nil {
					t.Fatalf("building a %s provider: %v", kind, err)
				}
				return p
			})
		})
	}
}
