package openai

import (
	"cmp"
	"testing"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-SECRET-0123456789"

// newTestProvider builds a provider whose retries do not really wait and
// whose jitter always picks the top of the range.
func newTestProvider(t testing.TB, cfg agent.ProviderConfig) (*Provider, *agenttest.Sleeps) {
	cfg.Model = cmp.Or(cfg.Model, "fake-model")
	p, rec := agenttest.Build(t, New, cfg), &agenttest.Sleeps{}
	p.client.Sleep, p.client.Backoff.Rand = rec.Sleep, agenttest.TopJitter
	return p, rec
}
