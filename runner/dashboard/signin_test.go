package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store"
)

func sessionCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == "rx_session" {
			return c
		}
	}
	t.Fatalf("no rx_session cookie set; Set-Cookie = %q", res.Header.Values("Set-Cookie"))
	return nil
}

// TestSignInWithToken: the form signs in with a valid token only; the
// session cookie is HttpOnly, SameSite=Strict and expires; the token never
// appears in a page or URL afterwards.
func TestSignInWithToken(t *testing.T) {
	e := newEnv(t, nil)
	secret := e.token("erin", store.RoleApprove)
	b := e.browser()

	if p := b.get("/"); p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/login") {
		t.Fatalf("/ before sign-in = %d %q, want a redirect to /login", p.StatusCode, p.Header.Get("Location"))
	}
	if p := b.signIn("rxt_wrong"); p.StatusCode != http.StatusUnauthorized || !strings.Contains(p.Body, "not valid") {
		t.Fatalf("a wrong token = %d", p.StatusCode)
	}
	if p := b.post("/login", url.Values{"token": {secret}}); p.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in without the form's anti-forgery value = %d, want 403", p.StatusCode)
	}
	p := b.signIn(secret)
	if p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/" {
		t.Fatalf("sign-in = %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	c := sessionCookie(t, p.Response)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value == "" || c.Value == secret {
		t.Errorf("session cookie = %+v", c)
	}
	if left := time.Until(c.Expires); left < 11*time.Hour || left > 13*time.Hour {
		t.Errorf("session cookie expires in %s, want the default 12h", left)
	}
	home := b.get("/")
	if home.StatusCode != 200 || !strings.Contains(home.Body, "token:erin · approve") {
		t.Fatalf("/ after sign-in = %d:\n%s", home.StatusCode, home.Body)
	}
	if strings.Contains(home.Body, secret) || strings.Contains(home.Body, c.Value) {
		t.Error("the page shows the token or the session secret")
	}

	// Signing out ends the session on the server, not just in the browser.
	if p := b.post("/logout", url.Values{"csrf": {b.csrf()}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out = %d", p.StatusCode)
	}
	replay := e.browser()
	u, _ := url.Parse(e.srv.URL)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: "rx_session", Value: c.Value}})
	if p := replay.get("/"); p.StatusCode != http.StatusSeeOther {
		t.Errorf("the signed-out session's cookie still opens / (%d)", p.StatusCode)
	}
}

// TestLoginLink: opening a code from `reasonix login-link` (a GET, as a
// chat's link preview or a mail scanner does too) spends nothing and shows
// a Sign in button; its same-origin POST signs in once and lands on a URL
// without the code; a cross-origin POST is refused with the code unspent;
// the second use and an expired code are refused.
func TestLoginLink(t *testing.T) {
	e := newEnv(t, nil)
	e.token("erin", store.RoleSubmit)
	ctx := context.Background()
	code, err := e.st.CreateLoginCode(ctx, "erin", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	link := "/login/link?code=" + url.QueryEscape(code)
	for i := range 2 {
		p := e.browser().get(link)
		if p.StatusCode != http.StatusOK || !strings.Contains(p.Body, `action="/login/link"`) ||
			!strings.Contains(p.Body, `name="code" value="`+code+`"`) || !strings.Contains(p.Body, ">Sign in</button>") {
			t.Fatalf("GET %d of the link = %d:\n%s", i+1, p.StatusCode, p.Body)
		}
		noSession(t, p)
	}
	if res, err := e.browser().c.Head(e.srv.URL + link); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("HEAD of the link = %v, %v", res, err)
	} else {
		res.Body.Close()
	}

	b := e.browser()
	for _, origin := range []string{"http://evil.example", "null"} {
		p := b.postFrom(origin, "/login/link", url.Values{"code": {code}})
		if p.StatusCode != http.StatusForbidden || !strings.Contains(p.Body, "the link was not used") {
			t.Fatalf("a POST from %s = %d:\n%s", origin, p.StatusCode, p.Body)
		}
		noSession(t, p)
	}
	p := b.post("/login/link", url.Values{"code": {code}})
	if p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/" {
		t.Fatalf("the button's POST = %d %q:\n%s", p.StatusCode, p.Header.Get("Location"), p.Body)
	}
	sessionCookie(t, p.Response)
	if home := b.get("/"); home.StatusCode != 200 || !strings.Contains(home.Body, "token:erin · submit") {
		t.Fatalf("/ after the link = %d", home.StatusCode)
	}
	again := e.browser().post("/login/link", url.Values{"code": {code}})
	if again.StatusCode != http.StatusUnauthorized || !strings.Contains(again.Body, "used already or expired") {
		t.Fatalf("second POST = %d:\n%s", again.StatusCode, again.Body)
	}
	noSession(t, again)

	late, _ := e.st.CreateLoginCode(ctx, "erin", time.Minute)
	e.clk.Advance(2 * time.Minute)
	lateBrowser := e.browser()
	if p := lateBrowser.get("/login/link?code=" + url.QueryEscape(late)); p.StatusCode != http.StatusOK {
		t.Fatalf("GET of an expired link = %d, want the page (a GET looks nothing up)", p.StatusCode)
	}
	if p := lateBrowser.post("/login/link", url.Values{"code": {late}}); p.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST of an expired code = %d, want 401", p.StatusCode)
	}

	// Anything but a code's shape is neither echoed nor looked up.
	for _, bad := range []string{"", "rxl_", "rxl_" + strings.Repeat("G", 64), `rxl_"><script>`, strings.ToUpper(code)} {
		if p := e.browser().get("/login/link?code=" + url.QueryEscape(bad)); p.StatusCode != http.StatusUnauthorized || strings.Contains(p.Body, "<script>") {
			t.Errorf("GET with code %q = %d", bad, p.StatusCode)
		}
	}
}

// noSession fails when res set a session cookie.
func noSession(t *testing.T, p page) {
	t.Helper()
	for _, c := range p.Cookies() {
		if c.Name == "rx_session" && c.Value != "" {
			t.Fatalf("a session cookie was set: %+v", c)
		}
	}
}

// TestSessionExpiresAndFollowsTheToken: a session ends at its expiry and
// when its token is revoked.
func TestSessionExpiresAndFollowsTheToken(t *testing.T) {
	e := newEnv(t, nil)
	secret := e.token("erin", store.RoleApprove)
	b := e.browser()
	b.signIn(secret)
	if p := b.get("/"); p.StatusCode != 200 {
		t.Fatalf("/ = %d", p.StatusCode)
	}
	e.clk.Advance(13 * time.Hour)
	if p := b.get("/"); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("/ after the session's 12h = %d, want a redirect to sign in", p.StatusCode)
	}
	b.signIn(secret)
	if _, err := e.st.RevokeToken(context.Background(), "erin"); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/"); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("/ after the token was revoked = %d", p.StatusCode)
	}
}

// TestNextStaysOnSite: the destination after sign-in is a local path.
func TestNextStaysOnSite(t *testing.T) {
	e := newEnv(t, nil)
	secret := e.token("erin", store.RoleSubmit)
	for next, want := range map[string]string{"/approvals": "/approvals", "//evil.example": "/", "https://evil.example/": "/", `/\evil`: "/"} {
		b := e.browser()
		form := b.get("/login?next=" + url.QueryEscape(next))
		m := loginCSRF.FindStringSubmatch(form.Body)
		p := b.post("/login", url.Values{"token": {secret}, "login_csrf": {m[1]}, "next": {next}})
		if got := p.Header.Get("Location"); got != want {
			t.Errorf("next %q: redirected to %q, want %q", next, got, want)
		}
	}
}
