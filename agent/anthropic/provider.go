// Package anthropic is the provider of kind "anthropic": a small streaming
// client for Anthropic's Messages API. It registers itself with
// agent.Providers in init.
//
// The system prompt and tool definitions form a stable prefix marked for
// prompt caching, so a long run pays full price for them once. Tool calls
// arrive as tool_use content blocks whose input JSON is streamed in pieces;
// the client assembles them per block and passes on only complete calls.
// Failures are classified into the agent.Err* classes, retried with
// jittered backoff (never shorter than the server's retry-after) while
// nothing has reached the caller, and every wait is bounded by an idle
// watchdog rather than a whole-request timeout.
package anthropic

import (
	"cmp"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Kind is the registry kind of this provider.
const Kind = "anthropic"

const (
	// DefaultBaseURL is the endpoint requests go to when the configuration
	// names none.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is sent when a request sets no MaxTokens: the
	// Messages API requires the field.
	DefaultMaxTokens = 4096
)

// apiVersion is the Messages API version this client speaks.
const apiVersion = "2023-06-01"

func init() {
	agent.RegisterProvider(Kind, func(cfg agent.ProviderConfig) (agent.Provider, error) {
		p, err := New(cfg)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return p, nil
	})
}

// Provider streams messages from one Anthropic endpoint. It is safe for
// concurrent use; requests share a pool of kept-alive connections.
type Provider struct {
	name   string
	model  string
	client *httpstream.Client // endpoint, key, bounds, retries
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Requests go to BaseURL
// (default DefaultBaseURL) + "/v1/messages" unless RequestURL names the
// exact target; httpstream.New says what else is checked and defaulted.
func New(cfg agent.ProviderConfig) (*Provider, error) {
	client, err := httpstream.New(Kind, cfg, DefaultBaseURL, "/v1/messages")
	if err != nil {
		return nil, err
	}
	return &Provider{name: cmp.Or(cfg.Name, Kind), model: cfg.Model, client: client}, nil
}

// Name returns the configured instance name, or "anthropic".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes kept-alive connections no request is using,
// e.g. at shutdown or at the end of a test that checks for leaks.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
