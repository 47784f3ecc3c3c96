package responses

import (
	"testing"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-proj-test-SECRET-0123456789"

// apiFailure is an error reply in OpenAI's JSON envelope.
func apiFailure(status int, typ, code, msg string, header map[string]string) agenttest.Reply {
	if code == "" {
		code = "null"
	} else {
		code = `"` + code + `"`
	}
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	return agenttest.Reply{Status: status, Header: h,
		Body: `{"error":{"message":"` + msg + `","type":"` + typ + `","param":null,"code":` + code + `}}`}
}

// config points a provider at api.
func config(api *agenttest.ReplayServer) agent.ProviderConfig {
	return agent.ProviderConfig{Name: "oai", Kind: Kind, BaseURL: api.URL, Model: "gpt-4.1", APIKey: testKey}
}

// newTestProvider builds a provider whose retries do not really wait and
// whose jitter always picks the top of its range.
func newTestProvider(t testing.TB, cfg agent.ProviderConfig) (*Provider, *agenttest.Sleeps) {
	p, rec := agenttest.Build(t, New, cfg), &agenttest.Sleeps{}
	p.client.Sleep, p.client.Backoff.Rand = rec.Sleep, agenttest.TopJitter
	return p, rec
}
