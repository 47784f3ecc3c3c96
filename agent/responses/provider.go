// Package responses is the provider of kind "responses": a small streaming
// client for OpenAI's Responses API. It registers itself with
// agent.Providers in init.
//
// The Responses API speaks in output items: messages, function calls and
// reasoning. Function-call arguments stream in pieces and are passed on only
// complete. Reasoning items are requested in their encrypted form and kept,
// opaque, on the assistant message (agent.Message.ProviderState), because
// requests are sent with store=false: the server keeps nothing between
// calls, so the model's reasoning must travel back with the conversation.
// Failures are classified into the agent.Err* classes, retried with jittered
// backoff (never shorter than the server's Retry-After) while nothing has
// reached the caller, and every wait is bounded by an idle watchdog.
package responses

import (
	"cmp"
	"sync/atomic"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Kind is the registry kind of this provider.
const Kind = "responses"

// DefaultBaseURL is the endpoint requests go to when the configuration
// names none.
const DefaultBaseURL = "https://api.openai.com/v1"

func init() {
	agent.RegisterProvider(Kind, func(cfg agent.ProviderConfig) (agent.Provider, error) {
		p, err := New(cfg)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return p, nil
	})
}

// Provider streams responses from one Responses API endpoint. It is safe
// for concurrent use; requests share a pool of kept-alive connections.
type Provider struct {
	name   string
	model  string
	client *httpstream.Client // endpoint, key, bounds, retries
	// plainReasoning is set once the endpoint refused encrypted reasoning
	// (a model without reasoning): requests then stop asking for it.
	plainReasoning atomic.Bool
	// noSummary is set once the endpoint refused reasoning summaries:
	// requests then stop asking for them.
	noSummary atomic.Bool
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Requests go to BaseURL
// (default DefaultBaseURL) + "/responses" unless RequestURL names the exact
// target; httpstream.New says what else is checked and defaulted.
func New(cfg agent.ProviderConfig) (*Provider, error) {
	client, err := httpstream.New(Kind, cfg, DefaultBaseURL, "/responses")
	if err != nil {
		return nil, err
	}
	return &Provider{name: cmp.Or(cfg.Name, Kind), model: cfg.Model, client: client}, nil
}

// Name returns the configured instance name, or "responses".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes kept-alive connections no request is using,
// e.g. at shutdown or at the end of a test that checks for leaks.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
