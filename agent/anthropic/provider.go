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
const Kind = "anthropic"

// Defaults applied by New to zero configuration fields.
const (
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultIdleTimeout = 300 * time.Second
	DefaultMaxRetries  = 4
	// DefaultMaxTokens is sent when a request sets no MaxTokens: the
	// Messages API requires the field.
	DefaultMaxTokens = 4096
)

// apiVersion is the Messages API version this client speaks.
const apiVersion = "2023-06-01"

// maxRetryAfter is the longest server-requested wait Stream sits out
// itself; a longer one is returned, so the caller can park the task.
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

// Provider streams messages from one Anthropic endpoint. It is safe for
// concurrent use; requests share a pool of kept-alive connections.
type Provider struct {
	name       string
	target     string
	model      string
	key        string
	idle       time.Duration
	maxRetries int
	client     *http.Client

	// Seams for tests: how retries wait, how delays are drawn, what time it is.
	backoff backoff.Policy
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Model is required. Requests go
// to BaseURL (default DefaultBaseURL) + "/v1/messages" unless RequestURL
// names the exact target. IdleTimeout defaults to DefaultIdleTimeout and
// MaxRetries to DefaultMaxRetries (negative: no retries).
func New(cfg agent.ProviderConfig) (*Provider, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("anthropic: model is required")
	}
	base := cmp.Or(cfg.BaseURL, DefaultBaseURL)
	if err := checkURL("base_url", base); err != nil {
		return nil, err
	}
	target := strings.TrimRight(base, "/") + "/v1/messages"
	if cfg.RequestURL != "" {
		if err := checkURL("request_url", cfg.RequestURL); err != nil {
			return nil, err
		}
		target = cfg.RequestURL
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New("anthropic: api key contains control characters (a stray newline?)")
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("anthropic: idle timeout must not be negative, got %s", cfg.IdleTimeout)
	}
	retries := max(cmp.Or(cfg.MaxRetries, DefaultMaxRetries), 0)

	transport := http.DefaultTransport.(*http.Transport).Clone()
	// A fleet shares one endpoint; two idle connections per host would make
	// the other agents redial on every step.
	transport.MaxIdleConnsPerHost = 32
	return &Provider{
		name:       cmp.Or(cfg.Name, Kind),
		target:     target,
		model:      cfg.Model,
		key:        cfg.APIKey,
		idle:       cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		maxRetries: retries,
		// No client timeout: an answer may stream for many minutes; the
		// idle watchdog bounds every wait instead.
		client:  &http.Client{Transport: transport},
		backoff: backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		sleep:   backoff.Sleep,
		now:     time.Now,
	}, nil
}

func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("anthropic: %s is not a URL", field)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("anthropic: %s %q must be an absolute http(s) URL", field, u.Redacted())
	}
	return nil
}

// Name returns the configured instance name, or "anthropic".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes kept-alive connections no request is using,
// e.g. at shutdown or at the end of a test that checks for leaks.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
