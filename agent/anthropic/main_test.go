package anthropic

import (
	"testing"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-ant-test-SECRET-0123456789"

// apiFailure is an error reply in the API's JSON envelope.
func apiFailure(status int, typ, msg string, header map[string]string) agenttest.Reply {
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	return agenttest.Reply{Status: status, Header: h,
		Body: `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`}
}

// config points a provider at api.
func config(api *agenttest.ReplayServer) agent.ProviderConfig {
	return agent.ProviderConfig{Name: "claude", Kind: Kind, BaseURL: api.URL, Model: "claude-sonnet-4-5", APIKey: testKey}
}

// newTestProvider builds a provider whose retries do not really wait and
// whose jitter always picks the top of its range.
func newTestProvider(t testing.TB, cfg agent.ProviderConfig) (*Provider, *agenttest.Sleeps) {
	p, rec := agenttest.Build(t, New, cfg), &agenttest.Sleeps{}
	p.client.Sleep, p.client.Backoff.Rand = rec.Sleep, agenttest.TopJitter
	return p, rec
}
