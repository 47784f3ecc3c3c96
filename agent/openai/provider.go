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
	"net/url"
	"strings"
	"time"

	"reasonix/agent"
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
	DefaultMaxStreamBytes = 64 << 20
)

// maxRetryAfter is the longest server-requested wait Stream sits out
// itself. A longer one is returned as the rate-limit error, so the caller can
// park the task instead of holding a worker.
const maxRetryAfter = 2 * time.Minute

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
	maxOutput  int // bytes of text and tool calls per answer
	maxStream  int // bytes of response body per attempt
	client     *http.Client

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
	base := cmp.Or(cfg.BaseURL, DefaultBaseURL)
	if err := checkURL("base_url", base); err != nil {
		return nil, err
	}
	target := strings.TrimRight(base, "/") + "/chat/completions"
	if cfg.RequestURL != "" {
		if err := checkURL("request_url", cfg.RequestURL); err != nil {
			return nil, err
		}
		target = cfg.RequestURL
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		// Checked here because net/http would only fail at request time.
		return nil, errors.New("openai: api key contains control characters (a stray newline?)")
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("openai: idle timeout must not be negative, got %s", cfg.IdleTimeout)
	}
	if cfg.MaxOutputBytes < 0 || cfg.MaxStreamBytes < 0 {
		return nil, fmt.Errorf("openai: output bounds must not be negative, got %d and %d", cfg.MaxOutputBytes, cfg.MaxStreamBytes)
	}
	retries := cmp.Or(cfg.MaxRetries, DefaultMaxRetries)
	if retries < 0 {
		retries = 0
	}

	transport := http.DefaultTransport.(*http.Transport).Clone()
	// Fleets run several agents against one endpoint; the default of two
	// idle connections per host would make the rest redial every step.
	transport.MaxIdleConnsPerHost = 32
	return &Provider{
		name:       cmp.Or(cfg.Name, Kind),
		target:     target,
		model:      cfg.Model,
		key:        cfg.APIKey,
		idle:       cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		maxRetries: retries,
		maxOutput:  cmp.Or(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		maxStream:  cmp.Or(cfg.MaxStreamBytes, DefaultMaxStreamBytes),
		// No Timeout: a stream may last as long as the model writes. The
		// idle watchdog in Stream bounds every wait instead.
		client:  &http.Client{Transport: transport},
		backoff: backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		sleep:   backoff.Sleep,
		now:     time.Now,
	}, nil
}

// checkURL accepts absolute http and https URLs. Its errors show the URL
// with any password removed.
func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("openai: %s is not a URL", field)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("openai: %s %q must be an absolute http(s) URL", field, u.Redacted())
	}
	return nil
}

// Name returns the configured instance name, or "openai".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes the kept-alive connections that no request is
// using. Call it when the provider is no longer needed, e.g. at shutdown or
// at the end of a test that checks for leaked goroutines.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }

// redact removes the API key from text that may leave the process.
func (p *Provider) redact(s string) string {
	if p.key == "" {
		return s
	}
	return strings.ReplaceAll(s, p.key, "[REDACTED]")
}
