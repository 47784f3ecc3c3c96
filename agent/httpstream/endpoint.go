package httpstream

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"reasonix/agent"
)

// Target validates the endpoint settings of cfg that every HTTP provider
// shares and returns the exact request URL: cfg.RequestURL when set, else
// cfg.BaseURL (defaultBase when empty) with path appended. Both must be
// absolute http(s) URLs; the API key must not contain control characters
// (net/http would only refuse it at request time); the idle timeout must
// not be negative. Errors start with prefix and never show a URL's password
// or the key.
func Target(prefix string, cfg agent.ProviderConfig, defaultBase, path string) (string, error) {
	base := cmp.Or(cfg.BaseURL, defaultBase)
	if err := checkURL(prefix, "base_url", base); err != nil {
		return "", err
	}
	target := strings.TrimRight(base, "/") + path
	if cfg.RequestURL != "" {
		if err := checkURL(prefix, "request_url", cfg.RequestURL); err != nil {
			return "", err
		}
		target = cfg.RequestURL
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", errors.New(prefix + ": api key contains control characters (a stray newline?)")
	}
	if cfg.IdleTimeout < 0 {
		return "", fmt.Errorf("%s: idle timeout must not be negative, got %s", prefix, cfg.IdleTimeout)
	}
	return target, nil
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
