package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store"
)

// TestSecurityHeaders: every answer, signed in or not, carries a strict
// CSP; no page has inline script or inline event handlers.
func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, bashThenDone())
	b := e.browser()
	taskID, _ := e.parked("token:alice", "look")
	b.signIn(e.token("erin", store.RoleAdmin))
	code, err := e.st.CreateLoginCode(t.Context(), "erin", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>[^<]|<script>|\son[a-z]+=`)
	for _, path := range []string{"/login", "/login/link?code=" + code, "/", "/tasks/" + taskID, "/approvals", "/schedules", "/nodes", "/nope", "/static/app.js", "/static/app.css"} {
		p := b.get(path)
		csp := p.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP = %q", path, csp)
		}
		if p.Header.Get("X-Content-Type-Options") != "nosniff" || p.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers = %v", path, p.Header)
		}
		if strings.HasSuffix(path, ".js") {
			continue
		}
		if m := inline.FindString(p.Body); m != "" {
			t.Errorf("%s: inline script %q", path, m)
		}
	}
	if p := b.get("/nope"); p.StatusCode != http.StatusNotFound {
		t.Errorf("/nope = %d", p.StatusCode)
	}
	// The API is still the API.
	if res := e.browser().get("/api/v1/tasks"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/v1/tasks without a bearer token = %d", res.StatusCode)
	}
}

// TestCSRF: a state-changing request without the session's CSRF token, with
// a wrong one, or from another origin is refused and changes nothing.
func TestCSRF(t *testing.T) {
	e := newEnv(t, bashThenDone())
	secret := e.token("alice", store.RoleApprove)
	taskID, ap := e.parked("token:alice", "wait for me")
	b := e.browser()
	b.signIn(secret)
	csrf := b.csrf()
	cases := []struct {
		name   string
		origin string
		form   url.Values
	}{
		{"no token", e.srv.URL, url.Values{}},
		{"wrong token", e.srv.URL, url.Values{"csrf": {strings.Repeat("0", 64)}}},
		{"another origin", "https://evil.example", url.Values{"csrf": {csrf}}},
	}
	for _, c := range cases {
		for _, path := range []string{"/tasks/" + taskID + "/cancel", "/approvals/" + ap.ID, "/logout"} {
			form := url.Values{"decision": {"deny"}}
			for k, v := range c.form {
				form[k] = v
			}
			if p := b.postFrom(c.origin, path, form); p.StatusCode != http.StatusForbidden {
				t.Errorf("%s: POST %s = %d, want 403", c.name, path, p.StatusCode)
			}
		}
	}
	task, _ := e.svc.Task(t.Context(), taskID)
	a, _ := e.st.Approval(t.Context(), ap.ID)
	if task.State != store.StateWaitingApproval || a.State != store.ApprovalPending {
		t.Fatalf("after refused requests: task %s, approval %s; want both unchanged", task.State, a.State)
	}
	if p := b.get("/"); p.StatusCode != 200 {
		t.Fatalf("the refused sign-out signed out (%d)", p.StatusCode)
	}
	if p := b.post("/tasks/"+taskID+"/cancel", url.Values{"csrf": {csrf}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel with the token = %d:\n%s", p.StatusCode, p.Body)
	}
	if task, _ := e.svc.Task(t.Context(), taskID); task.State != store.StateCancelled {
		t.Fatalf("after cancel: %s", task.State)
	}
}
