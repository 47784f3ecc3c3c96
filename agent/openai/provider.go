// Package openai is the provider of kind "openai": a small streaming client
// for OpenAI-compatible chat completions endpoints (OpenAI, DeepSeek, vLLM,
// llama.cpp, proxies). It registers itself with agent.Providers in init.
//
// The client streams with server-sent events, accumulates tool-call deltas
// by index, classifies failures into the agent.Err* classes, retries
// transient failures before anything reached the caller, and guards every
// wait with an idle watchdog instead of a whole-request timeout, because a
// long answer may legitimately stream for many minutes.
package openai

import (
	"cmp"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// Kind is the registry kind of this provider.
const Kind = "openai"

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

// Provider streams chat completions from one OpenAI-compatible endpoint. It
// is safe for concurrent use; requests share a pool of kept-alive
// connections.
type Provider struct {
	name   string
	model  string
	client *httpstream.Client // endpoint, key, bounds, retries
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Requests go to BaseURL
// (default DefaultBaseURL) + "/chat/completions" unless RequestURL names the
// exact target; httpstream.New says what else is checked and defaulted.
func New(cfg agent.ProviderConfig) (*Provider, error) {
	client, err := httpstream.New(Kind, cfg, DefaultBaseURL, "/chat/completions")
	if err != nil {
		return nil, err
	}
	return &Provider{name: cmp.Or(cfg.Name, Kind), model: cfg.Model, client: client}, nil
}

// Name returns the configured instance name, or "openai".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes the kept-alive connections that no request is
// using. Call it when the provider is no longer needed, e.g. at shutdown or
// at the end of a test that checks for leaked goroutines.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
