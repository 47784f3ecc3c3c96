package builtin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

const testPage = `<!doctype html><html><head><title>Release notes</title><style>body{color:red}</style>
<script>var secret = "SCRIPT-TEXT";</script></head><body>
<nav><a href="/home">Home</a></nav>
<h2>Version 2</h2><p>Adds   <b>web_fetch</b> and <a href="https://example.com/docs">the docs</a>.</p>
<ul><li>one</li><li>two</li></ul><pre><code>go test ./...
</code></pre></body></html>`

// serveWebFetch starts a test site and maps host (a name that resolves
// nowhere) to it, the one way past the address check; the mapping ends
// with the test.
func serveWebFetch(t *testing.T, host string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.test/x", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "plain text")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 3<<20))
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2})
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	srv := httptest.NewServer(mux)
	webFetchTestHosts.Lock()
	if webFetchTestHosts.m == nil {
		webFetchTestHosts.m = map[string]string{}
	}
	webFetchTestHosts.m[host+":80"] = srv.Listener.Addr().String()
	webFetchTestHosts.Unlock()
	t.Cleanup(func() {
		webFetchTestHosts.Lock()
		delete(webFetchTestHosts.m, host+":80")
		webFetchTestHosts.Unlock()
		srv.Close()
	})
	return srv
}

func TestWebFetchReturnsThePageAsMarkdown(t *testing.T) {
	serveWebFetch(t, "docs.test")
	env, _ := testEnv(t)
	tl := tool(t, env, "web_fetch")
	out := mustCall(t, tl, map[string]any{"url": "http://docs.test/same"})
	for _, want := range []string{"URL: http://docs.test/", "# Release notes", "## Version 2", "Adds web_fetch and [the docs](https://example.com/docs).",
		"- one", "- two", "```\ngo test ./...", "[Home](/home)"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SCRIPT-TEXT") || strings.Contains(out, "color:red") {
		t.Errorf("script or style text in the result:\n%s", out)
	}
	if out := mustCall(t, tl, map[string]any{"url": "http://docs.test/plain"}); !strings.HasSuffix(out, "\nplain text") {
		t.Errorf("plain = %q", out)
	}
	if out := mustCall(t, tl, map[string]any{"url": "http://docs.test/big"}); len(out) > 32<<10 || !strings.Contains(out, "only its start was read") || !strings.Contains(out, "[cut:") {
		t.Errorf("big page: %d bytes, %q…", len(out), out[:200])
	}
	// Another host is named, not fetched: the gate decides its domain.
	if out := mustCall(t, tl, map[string]any{"url": "http://docs.test/away"}); !strings.Contains(out, "redirects to another host: http://elsewhere.test/x") {
		t.Errorf("cross-host redirect = %q", out)
	}
	wantErr(t, tl, map[string]any{"url": "http://docs.test/loop"}, "redirects")
	wantErr(t, tl, map[string]any{"url": "http://docs.test/bin"}, "not text")
	wantErr(t, tl, map[string]any{"url": "http://docs.test/missing"}, "404")
}

// The service's own network is never reached: a loopback address, a name
// that resolves to one, and a URL the parser refuses.
func TestWebFetchRefusesLocalAddresses(t *testing.T) {
	srv := serveWebFetch(t, "docs.test")
	env, _ := testEnv(t)
	tl := tool(t, env, "web_fetch")
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/", "http://0.0.0.0:" + port + "/"} {
		wantErr(t, tl, map[string]any{"url": u}, "refused")
	}
	wantErr(t, tl, map[string]any{"url": "file:///etc/passwd"}, "only http and https")
	wantErr(t, tl, map[string]any{"url": "http://user:pw@docs.test/"}, "user information")
}

func TestPublicAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1:248:1893:25c8:1946": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fc00::1": false, "::ffff:10.0.0.1": false,
		"::ffff:169.254.169.254": false, "224.0.0.1": false, "255.255.255.255": false, "64:ff9b::a00:1": false, "2002:7f00:1::": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}

// FuzzParseFetchURL: parsing never panics; an accepted URL is http or
// https with a host, and the host is the lower-case name without a
// trailing dot that the URL itself names, as the permission gate sees it.
func FuzzParseFetchURL(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=c", "http://EXAMPLE.com./", "http://127.0.0.1:8080/", "http://[::1]/",
		"http://user:pw@host/", "file:///etc/passwd", "javascript:alert(1)", "http://%41.com/", "//example.com", "http://a@b@c/",
		"http://example.com\\@evil.com/", "http://[fe80::1%25eth0]/", "HTTPS://x.y", "http:///path", "http://evil.com#@good.com",
		"http://..", "http://./", "http://a..b/", "http://.a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, host, err := ParseFetchURL(s)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || host == "" || u.User != nil {
			t.Fatalf("%q accepted as %q host %q", s, u.String(), host)
		}
		if host != strings.ToLower(host) || strings.HasSuffix(host, ".") {
			t.Fatalf("%q: host %q not normalised", s, host)
		}
		if strings.TrimSuffix(strings.ToLower(u.Hostname()), ".") != host {
			t.Fatalf("%q: host %q is not the URL's %q", s, host, u.Hostname())
		}
	})
}
