package httpstream

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"reasonix/agent"
	"reasonix/internal/backoff"
)

// Defaults New gives the zero fields of a configuration; every HTTP
// provider kind shares them.
const (
	DefaultIdleTimeout = 300 * time.Second
	DefaultMaxRetries  = 4
	// DefaultMaxOutputBytes bounds one answer's text and tool calls: far
	// more than any useful answer, far less than a runaway model can send.
	DefaultMaxOutputBytes = 1 << 20
	// DefaultMaxStreamBytes bounds the raw response body (framing, JSON and
	// keep-alive comments included). It is far above DefaultMaxOutputBytes
	// because real streams carry ~200 bytes of JSON per delta of a few
	// characters: an answer of 1 MiB arrives as ~50 MiB. The body is decoded
	// and dropped as it arrives, so this bounds time and traffic, not memory.
	DefaultMaxStreamBytes = 64 << 20
)

// New validates the settings of cfg that every HTTP provider shares and
// returns the client for them; kind ("openai") starts every error message,
// naming the provider. Model is required. Requests go to cfg.RequestURL
// when set, else to cfg.BaseURL (defaultBase when empty) with path
// appended; both must be absolute http(s) URLs. The API key must not
// contain control characters (net/http would only refuse it at request
// time), and the idle timeout and output bounds must not be negative. Zero
// fields take the Default* values; a negative MaxRetries means none.
// Errors never show a URL's password or the key.
func New(kind string, cfg agent.ProviderConfig, defaultBase, path string) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New(kind + ": model is required")
	}
	base := cmp.Or(cfg.BaseURL, defaultBase)
	if err := checkURL(kind, "base_url", base); err != nil {
		return nil, err
	}
	target := strings.TrimRight(base, "/") + path
	if cfg.RequestURL != "" {
		if err := checkURL(kind, "request_url", cfg.RequestURL); err != nil {
			return nil, err
		}
		target = cfg.RequestURL
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New(kind + ": api key contains control characters (a stray newline?)")
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("%s: idle timeout must not be negative, got %s", kind, cfg.IdleTimeout)
	}
	if cfg.MaxOutputBytes < 0 || cfg.MaxStreamBytes < 0 {
		return nil, fmt.Errorf("%s: output bounds must not be negative, got max_output_bytes %d and max_stream_bytes %d",
			kind, cfg.MaxOutputBytes, cfg.MaxStreamBytes)
	}
	return &Client{
		Prefix:         kind,
		URL:            target,
		Key:            cfg.APIKey,
		Idle:           cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		MaxRetries:     max(cmp.Or(cfg.MaxRetries, DefaultMaxRetries), 0),
		MaxOutputBytes: cmp.Or(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		MaxStreamBytes: cmp.Or(cfg.MaxStreamBytes, DefaultMaxStreamBytes),
		HTTP:           sharedHTTP(),
		Backoff:        backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second},
		Sleep:          backoff.Sleep,
		Now:            time.Now,
	}, nil
}

// checkURL accepts absolute http and https URLs.
func checkURL(prefix, field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %s is not a URL", prefix, field)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %s %q must be an absolute http(s) URL", prefix, field, u.Redacted())
	}
	return nil
}

// NewHTTPClient returns the client a provider sends with: no whole-request
// timeout (an answer may stream for many minutes; the idle watchdog bounds
// every wait instead) and a pool that keeps enough idle connections per
// host for a fleet of agents sharing one endpoint, where the default of two
// would make the rest redial on every step.
func NewHTTPClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 32
	return &http.Client{Transport: transport}
}

// sharedHTTP is the client of every Client New builds: one connection pool
// per process. A service builds a provider per task; with a client each,
// every task dialled (and TLS-handshaked) its own connection and left it
// idle for 90 s, which held 231 MB after a burst of 9,000 short tasks. The
// pool is keyed by host, so providers share it without mixing.
var sharedHTTP = sync.OnceValue(NewHTTPClient)

// CloseIdleConnections closes the kept-alive connections no request is
// using (of every Client New built: they share them), e.g. at shutdown or at the end of a test that checks for leaks.
func (c *Client) CloseIdleConnections() { c.HTTP.CloseIdleConnections() }
