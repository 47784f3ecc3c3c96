package responses

import (
	"testing"

	"reasonix/agent/agenttest"
)

// TestKeepsTheProviderContract runs the provider conformance suite against
// the fake that speaks this kind's wire, with the provider built through
// the registry exactly as a configuration builds it.
func TestKeepsTheProviderContract(t *testing.T) { agenttest.TestRegisteredKind(t, Kind) }
