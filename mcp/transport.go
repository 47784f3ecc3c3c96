package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrCrossOrigin is returned (wrapped) when a remote server makes the client
// talk to an origin other than the configured URL's, as a legacy SSE server
// does when it announces a message endpoint elsewhere. Refusing keeps the
// configured headers, often credentials, from leaking.
var ErrCrossOrigin = errors.New("mcp: request to a different origin than the configured url refused")

// originGuard is an http.RoundTripper that adds the configured headers to
// requests for the configured origin. Requests elsewhere are refused when
// strict is set and sent without the headers otherwise (a redirect the
// standard client follows).
type originGuard struct {
	base    http.RoundTripper
	origin  *url.URL
	headers map[string]string
	strict  bool
}

func (g *originGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, g.origin) {
		if g.strict {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, fmt.Errorf("%w (server pointed the client at %s://%s)", ErrCrossOrigin, req.URL.Scheme, req.URL.Host)
		}
		return g.base.RoundTrip(req)
	}
	if len(g.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range g.headers {
			req.Header.Set(k, v)
		}
	}
	return g.base.RoundTrip(req)
}

// sameOrigin compares scheme, host and port, treating an absent port as the
// scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// remoteTransport builds the SDK transport of an http or sse server.
func remoteTransport(s *ServerConfig, base *http.Client) (sdk.Transport, error) {
	origin, err := url.Parse(s.URL)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %q: url does not parse", s.Name)
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	client := *base
	client.Transport = &originGuard{base: rt, origin: origin, headers: s.Headers, strict: s.Type == TypeSSE}
	if s.Type == TypeSSE {
		return &detachedTransport{inner: &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: &client}}, nil
	}
	// The SDK's own reconnect loop would hide a dead server behind minutes
	// of retries; a failed session is restarted on next use instead.
	return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &client, MaxRetries: -1}, nil
}

// detachedTransport gives a connection a lifetime of its own. The SDK's SSE
// transport ties its event stream to the context passed to Connect, which is
// our startup timeout; detaching lets the stream outlive the startup while
// the startup context still bounds the connect itself.
type detachedTransport struct {
	inner sdk.Transport
}

func (t *detachedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended while connecting: life is cancelled, so is the stream.
		if conn != nil {
			_ = conn.Close()
		}
		cancel()
		return nil, errors.Join(ctx.Err(), err)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &detachedConn{Connection: conn, cancel: cancel}, nil
}

type detachedConn struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c *detachedConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
