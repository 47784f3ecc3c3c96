package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"reasonix/agent"
)

// Bounds of one web_fetch.
const (
	webFetchTimeout      = 30 * time.Second
	webFetchMaxBody      = 2 << 20 // bytes read from the response
	webFetchMaxRedirects = 5
	webFetchMaxURL       = 4096
)

func init() {
	agent.RegisterBuiltin("web_fetch", func(agent.ToolEnv) agent.Tool { return &webFetch{} })
}

// webFetch GETs a web page and returns it as text (HTML as Markdown).
// It is a writer for the permission policy (data leaves the machine in
// the URL), so under the ask posture it needs a person or a rule:
// WebFetch(domain:example.com).
//
// It never reaches the service's own network: every connection's peer
// address is checked when the socket connects (a net.Dialer Control
// hook), after DNS resolution and on every redirect hop, and a loopback,
// private, link-local, shared (CGNAT), multicast or unspecified address
// is refused. A redirect to another host is not followed: the model is
// told where it leads and may fetch that URL, a call the gate decides
// again for the new domain.
type webFetch struct{}

func (*webFetch) Name() string { return "web_fetch" }
func (*webFetch) Description() string {
	return "GET a public http(s) page and return its text (HTML as Markdown), cut to fit. Local and private addresses are refused; " +
		"a redirect to another host is named, not followed."
}

func (*webFetch) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "url": {"type": "string", "description": "The URL to fetch."}
  },
  "required": ["url"],
  "additionalProperties": false
}`)
}

type webFetchArgs struct {
	URL string `json:"url"`
}

// errRefusedAddress: the peer is an address web_fetch never connects to.
var errRefusedAddress = errors.New("web_fetch: refused: the address is private, loopback, link-local or otherwise not public")

// ParseFetchURL parses a URL web_fetch accepts: absolute http or https,
// a host, no user information, at most 4 KiB. The host it returns is
// lower-case without a trailing dot, as permission rules match it.
func ParseFetchURL(raw string) (*url.URL, string, error) {
	if len(raw) > webFetchMaxURL {
		return nil, "", fmt.Errorf("web_fetch: the URL is longer than %d bytes", webFetchMaxURL)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, "", fmt.Errorf("web_fetch: not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("web_fetch: only http and https URLs are fetched, not %q", u.Scheme)
	}
	if u.User != nil {
		return nil, "", errors.New("web_fetch: a URL with user information is refused")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, "", errors.New("web_fetch: the URL has no host")
	}
	// A name with an empty label ("..", ".a", "a..b") is no host a resolver
	// answers for, and the permission rules could not name it either.
	if strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") || strings.Contains(host, "..") {
		return nil, "", fmt.Errorf("web_fetch: %q is not a host name", u.Hostname())
	}
	return u, host, nil
}

func (t *webFetch) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a webFetchArgs
	if err := decodeArgs("web_fetch", raw, &a, "url"); err != nil {
		return "", err
	}
	u, host, err := ParseFetchURL(a.URL)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, webFetchTimeout)
	defer cancel()
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would be the checked peer, not the site
		DialContext:            guardedDial,
		TLSHandshakeTimeout:    10 * time.Second,
		DisableKeepAlives:      true,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer tr.CloseIdleConnections()
	var moved string
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > webFetchMaxRedirects {
				return fmt.Errorf("web_fetch: more than %d redirects", webFetchMaxRedirects)
			}
			if _, h, err := ParseFetchURL(req.URL.String()); err != nil || h != host {
				moved = req.URL.String()
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("web_fetch: %v", err)
	}
	req.Header.Set("User-Agent", "Reasonix web_fetch")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errRefusedAddress) {
			return "", fmt.Errorf("web_fetch: refused: %s resolves to an address that is not public (loopback, private, link-local)", host)
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return "", fmt.Errorf("web_fetch: %w", err)
		}
		return "", fmt.Errorf("web_fetch: %s: %v", host, redactURLError(err))
	}
	defer resp.Body.Close()
	if moved != "" {
		return fmt.Sprintf("%s redirects to another host: %s\nCall web_fetch with that URL to fetch it.", u.Redacted(), moved), nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, webFetchMaxBody+1))
	if err != nil {
		return "", fmt.Errorf("web_fetch: reading %s: %w", host, err)
	}
	cut := len(body) > webFetchMaxBody
	if cut {
		body = body[:webFetchMaxBody]
	}
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("web_fetch: %s answered %s", u.Redacted(), resp.Status)
	}
	text, err := pageText(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("URL: %s\nStatus: %s\n", resp.Request.URL.Redacted(), resp.Status)
	if cut {
		head += "(the page is longer than 2 MiB; only its start was read)\n"
	}
	return clipText(head+"\n"+text, agent.MaxToolResult-256), nil
}

// pageText turns a response body into text by its media type.
func pageText(contentType string, body []byte) (string, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || contentType == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = strings.Cut(mt, ";")
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return htmlToMarkdown(body), nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		if !utf8.Valid(body) {
			body = []byte(strings.ToValidUTF8(string(body), "\uFFFD"))
		}
		return string(body), nil
	}
	return "", fmt.Errorf("web_fetch: the page is %s, which is not text", mt)
}

// clipText cuts s to at most n bytes on a character boundary, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const note = "\n[cut: the page's text is longer than a tool result]"
	n -= len(note)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + note
}

// redactURLError keeps an error short: url.Error repeats the whole URL,
// which may carry query secrets, so only its cause is kept.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// webFetchTestHosts, set only by this package's tests, maps a host:port
// to the loopback address of a test server to dial instead, which the
// address check then lets through. Nothing outside the tests can set it:
// it is no configuration key, so no project file can open the service's
// own network.
var webFetchTestHosts struct {
	sync.Mutex
	m map[string]string
}

// guardedDial connects through a dialer whose Control hook refuses any
// peer that is not a public address; Control runs for every address the
// resolver returned, just before the socket connects, so a name that
// resolves (or is rebound) to a private address is refused too.
func guardedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	webFetchTestHosts.Lock()
	to, test := webFetchTestHosts.m[addr]
	webFetchTestHosts.Unlock()
	d := &net.Dialer{Timeout: 10 * time.Second}
	if test {
		return d.DialContext(ctx, network, to)
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !PublicAddr(ap.Addr()) {
			return errRefusedAddress
		}
		return nil
	}
	return d.DialContext(ctx, network, addr)
}

// nonPublic are ranges netip's predicates do not cover: carrier-grade NAT
// (RFC 6598), benchmarking (RFC 2544), "this network", IETF protocol
// assignments, reserved, documentation, and the IPv6 prefixes that embed
// an IPv4 address a gateway would forward to (NAT64, 6to4), which could
// name a private one.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// PublicAddr reports whether web_fetch may connect to a: not loopback,
// private, link-local, unspecified, multicast, shared or reserved, also
// when written as an IPv4-mapped IPv6 address.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
