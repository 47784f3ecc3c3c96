package openai

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestRegisteredProvidersKeepTheContract runs the provider conformance suite
// over every kind in agent.Providers, built through the registry exactly as
// a configuration builds it. Every registered kind must have an entry, so a
// new provider cannot join without passing the suite. Only this package's
// kind is registered here; cmd/reasonix runs every kind against its own
// wire's fake (TestEveryProviderKindKeepsTheContract).
func TestRegisteredProvidersKeepTheContract(t *testing.T) {
	tested := map[string]bool{Kind: true}
	for _, kind := range agent.Providers.Kinds() {
		if !tested[kind] {
			t.Errorf("provider kind %q is registered but has no conformance run: add it here", kind)
			continue
		}
		t.Run(kind, func(t *testing.T) { agenttest.TestRegisteredKind(t, kind) })
	}
}
