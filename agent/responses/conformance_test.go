package responses

import (
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestKeepsTheProviderContract runs the provider conformance suite against
// the fake that speaks this kind's wire, with the provider built through
// the registry exactly as a configuration builds it.
func TestKeepsTheProviderContract(t *testing.T) {
	agenttest.TestProviderFor(t, Kind, func(t *testing.T, cfg agent.ProviderConfig) agent.Provider {
		cfg.Kind = Kind
		p, err := agent.Providers.New(cfg)
		if err != nil {
			t.Fatalf("building a %s provider: %v", Kind, err)
		}
		return p
	})
}
