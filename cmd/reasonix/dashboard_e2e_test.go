package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDashboardOnTheBinary: `reasonix serve` serves the dashboard at / on
// its API address; `reasonix login-link` prints a link whose page's Sign in
// button signs a browser in once, as the service's admin token, and lands
// on a URL without the code.
func TestDashboardOnTheBinary(t *testing.T) {
	e := newE2E(t)
	s := e.serve(t)
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url string) (int, string, http.Header) {
		t.Helper()
		res, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body), res.Header
	}
	if code, _, h := get(s.url + "/"); code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/login") {
		t.Fatalf("/ before sign-in = %d %q", code, h.Get("Location"))
	}

	out, stderr, code := e.run("login-link", "--url", s.url)
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, s.url+"/login/link?code=rxl_") || !strings.Contains(stderr, "token:admin") {
		t.Fatalf("login-link = %d %q %s", code, link, stderr)
	}
	// Opening the link (as a chat's link preview would, too) spends
	// nothing; its page's Sign in button posts the code.
	if st, body, _ := get(link); st != http.StatusOK || !strings.Contains(body, `action="/login/link"`) {
		t.Fatalf("the link = %d:\n%s", st, body)
	}
	linkCode := strings.TrimPrefix(link, s.url+"/login/link?code=")
	post := func() (int, string) {
		t.Helper()
		res, err := c.PostForm(s.url+"/login/link", url.Values{"code": {linkCode}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Location")
	}
	if st, loc := post(); st != http.StatusSeeOther || loc != "/" {
		t.Fatalf("the link's Sign in = %d %q", st, loc)
	}
	st, body, h := get(s.url + "/")
	if st != http.StatusOK || !strings.Contains(body, "token:admin · admin") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("/ after the link = %d:\n%s", st, body)
	}
	if st, _ := post(); st != http.StatusUnauthorized {
		t.Errorf("the link's second use = %d, want 401", st)
	}

	if out, _, code := e.run("login-link"); code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "http://") ||
		!strings.Contains(out, "/login/link?code=rxl_") {
		t.Errorf("login-link without --url = %d %q", code, out)
	}
	if _, stderr, code := e.run("login-link", "--token", "nobody"); code != exitUsage || !strings.Contains(stderr, `no valid token is called "nobody"`) {
		t.Errorf("login-link for an unknown token = %d %s", code, stderr)
	}
	if _, _, code := e.run("login-link", "--ttl", "2h"); code != exitUsage {
		t.Errorf("--ttl 2h = %d, want %d", code, exitUsage)
	}
}

// TestDashboardSecureCookiesBehindProxy: with an https:// public_url, the
// dashboard's cookies are Secure though the request came over plain HTTP
// (as from a TLS-terminating proxy), and login-link prints links under
// public_url.
func TestDashboardSecureCookiesBehindProxy(t *testing.T) {
	e := newE2E(t)
	e.configure("\n[serve]\npublic_url = \"https://reasonix.example/\"\n")
	s := e.serve(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cookie := func(url, name string) *http.Cookie {
		t.Helper()
		res, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		for _, ck := range res.Cookies() {
			if ck.Name == name {
				return ck
			}
		}
		t.Fatalf("GET %s = %d set no %s cookie: %q", url, res.StatusCode, name, res.Header.Values("Set-Cookie"))
		return nil
	}
	if ck := cookie(s.url+"/login", "rx_login"); !ck.Secure || !ck.HttpOnly {
		t.Errorf("the sign-in form's cookie over plain HTTP = %+v, want Secure", ck)
	}
	out, stderr, code := e.run("login-link")
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, "https://reasonix.example/login/link?code=rxl_") {
		t.Fatalf("login-link with public_url = %d %q %s", code, link, stderr)
	}
	res, err := c.PostForm(s.url+"/login/link", url.Values{"code": {strings.TrimPrefix(link, "https://reasonix.example/login/link?code=")}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "rx_session" {
			session = ck
		}
	}
	if session == nil || !session.Secure || !session.HttpOnly || session.Value == "" {
		t.Errorf("the session cookie over plain HTTP = %+v (status %d), want Secure", session, res.StatusCode)
	}
}

// TestDashboardCommandOpensTheLink: `reasonix dashboard` prints the same
// one-time link as login-link; --open hands it to xdg-open, and without an
// opener the link is still printed and the exit status is 0.
func TestDashboardCommandOpensTheLink(t *testing.T) {
	e := newE2E(t)
	e.serve(t) // registers the admin token the link signs in as
	bin := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.extra = append(e.extra, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, stderr, code := e.run("dashboard", "--open", "--url", "http://127.0.0.1:1")
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:1/login/link?code=rxl_") || !strings.Contains(stderr, "token:admin") {
		t.Fatalf("dashboard --open = %d %q %s", code, link, stderr)
	}
	if got, err := os.ReadFile(opened); err != nil || string(got) != link {
		t.Fatalf("xdg-open received %q (%v), want the printed link %q", got, err, link)
	}

	os.Remove(opened)
	out, _, code = e.run("dashboard")
	if _, err := os.Stat(opened); code != 0 || !strings.Contains(out, "/login/link?code=rxl_") || err == nil {
		t.Errorf("dashboard without --open = %d %q; opened: %v", code, out, err == nil)
	}

	e.extra = append(e.extra, "PATH="+t.TempDir())
	out, stderr, code = e.run("dashboard", "--open")
	if code != 0 || !strings.Contains(out, "/login/link?code=rxl_") || !strings.Contains(stderr, "no xdg-open found") {
		t.Errorf("dashboard --open without an opener = %d %q %s", code, out, stderr)
	}
}
