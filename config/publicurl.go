package config

import (
	"net/url"
	"strings"
)

// [serve] public_url is the service's address as seen from outside (a
// reverse proxy's https://reasonix.example.com). The chat relay links
// tasks under it, and Telegram's webhook is registered at it.

// BaseURL is PublicURL without its trailing slash, "" when unset.
func (s Serve) BaseURL() string { return strings.TrimRight(s.PublicURL, "/") }

// checkPublicURL accepts an absolute http(s) URL with a host and no query
// or fragment: paths are appended to it.
func checkPublicURL(p *problems, src, raw string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.add(src, "serve.public_url", "%q is not a URL", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		p.add(src, "serve.public_url", "%q must start with https:// (or http://)", raw)
	case u.Host == "" || u.User != nil:
		p.add(src, "serve.public_url", "%q needs a host (and no user info)", raw)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		p.add(src, "serve.public_url", "%q must not carry a query or fragment", raw)
	}
}
