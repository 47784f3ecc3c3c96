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
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/agent/httpstream"
	"reasonix/internal/backoff"
)

// Kind is the registry kind of this provider.
const Kind = "openai"

// Defaults applied by New to zero configuration fields.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultIdleTimeout = 300 * time.Second
	DefaultMaxRetries  = 4
	// DefaultMaxOutputBytes bounds one answer's text and tool calls: far
	// more than any useful answer, far less than a runaway model can send.
	DefaultMaxOutputBytes = 1 << 20
	// DefaultMaxStreamBytes bounds the raw response body (framing, JSON and
	// keep-alive comments included). It is far above DefaultMaxOutputBytes
	// because real streams carry ~200 bytes of JSON per delta of a few
	// characters (OpenAI's chunks repeat id, model, fingerprint): an answer
	// of 1 MiB arrives as ~50 MiB. The body is decoded and dropped as it
	// arrives, so this bounds time and traffic, not memory.
	DefaultMaxStreamBytes = httpstream.DefaultMaxStreamBytes
)

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
	name       string
	target     string // the exact request URL
	model      string
	key        string
	idle       time.Duration
	maxRetries int
	maxOutput  int          // bytes of text and tool calls per answer
	maxStream  int          // bytes of response body per attempt
	client     *http.Client // no Timeout: the idle watchdog bounds every wait

	// Seams for tests: how retries wait and how their delays are drawn.
	backoff backoff.Policy
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Model is required. BaseURL
// defaults to DefaultBaseURL and requests go to BaseURL + "/chat/completions"
// unless RequestURL names the exact target; either must be an http(s) URL.
// IdleTimeout defaults to DefaultIdleTimeout, MaxRetries to
// DefaultMaxRetries (negative: no retries), MaxOutputBytes to
// DefaultMaxOutputBytes and MaxStreamBytes to DefaultMaxStreamBytes.
func New(cfg agent.ProviderConfig) (*Provider, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: model is required")
	}
	target, err := httpstream.Target(Kind, cfg, DefaultBaseURL, "/chat/completions")
	if err != nil {
		return nil, err
	}
	if cfg.MaxOutputBytes < 0 || cfg.MaxStreamBytes < 0 {
		return nil, fmt.Errorf("openai: output bounds must not be negative, got %d and %d", cfg.MaxOutputBytes, cfg.MaxStreamBytes)
	}
	retries := cmp.Or(cfg.MaxRetries, DefaultMaxRetries)
	if retries < 0 {
		retries = 0
	}
	return &Provider{
		name:       cmp.Or(cfg.Name, Kind),
		target:     target,
		model:      cfg.Model,
		key:        cfg.APIKey,
		idle:       cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		maxRetries: retries,
		maxOutput:  cmp.Or(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		maxStream:  cmp.Or(cfg.MaxStreamBytes, DefaultMaxStreamBytes),
		client:     httpstream.NewHTTPClient(),
		backoff:    backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		sleep:      backoff.Sleep,
		now:        time.Now,
	}, nil
}

// Name returns the configured instance name, or "openai".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes the kept-alive connections that no request is
// using. Call it when the provider is no longer needed, e.g. at shutdown or
// at the end of a test that checks for leaked goroutines.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
