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
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/agent/httpstream"
	"reasonix/internal/backoff"
)

// Kind is the registry kind of this provider.
const Kind = "anthropic"

// Defaults applied by New to zero configuration fields.
const (
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultIdleTimeout = 300 * time.Second
	DefaultMaxRetries  = 4
	// DefaultMaxStreamBytes bounds the raw response body of one attempt.
	DefaultMaxStreamBytes = httpstream.DefaultMaxStreamBytes
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
	name       string
	target     string
	model      string
	key        string
	idle       time.Duration
	maxRetries int
	maxStream  int          // bytes of response body per attempt
	client     *http.Client // no Timeout: the idle watchdog bounds every wait

	// Seams for tests: how retries wait, how delays are drawn, what time it is.
	backoff backoff.Policy
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. Model is required. Requests go
// to BaseURL (default DefaultBaseURL) + "/v1/messages" unless RequestURL
// names the exact target. IdleTimeout defaults to DefaultIdleTimeout,
// MaxRetries to DefaultMaxRetries (negative: no retries) and MaxStreamBytes
// to DefaultMaxStreamBytes.
func New(cfg agent.ProviderConfig) (*Provider, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("anthropic: model is required")
	}
	target, err := httpstream.Target(Kind, cfg, DefaultBaseURL, "/v1/messages")
	if err != nil {
		return nil, err
	}
	if cfg.MaxStreamBytes < 0 {
		return nil, fmt.Errorf("%s: max stream bytes must not be negative, got %d", Kind, cfg.MaxStreamBytes)
	}
	return &Provider{
		name:       cmp.Or(cfg.Name, Kind),
		target:     target,
		model:      cfg.Model,
		key:        cfg.APIKey,
		idle:       cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		maxRetries: max(cmp.Or(cfg.MaxRetries, DefaultMaxRetries), 0),
		maxStream:  cmp.Or(cfg.MaxStreamBytes, DefaultMaxStreamBytes),
		client:     httpstream.NewHTTPClient(),
		backoff:    backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		sleep:      backoff.Sleep,
		now:        time.Now,
	}, nil
}

// Name returns the configured instance name, or "anthropic".
func (p *Provider) Name() string { return p.name }

// CloseIdleConnections closes kept-alive connections no request is using,
// e.g. at shutdown or at the end of a test that checks for leaks.
func (p *Provider) CloseIdleConnections() { p.client.CloseIdleConnections() }
