package dashboard

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"reasonix/internal/ids"
	"reasonix/runner"
	"reasonix/runner/store"
)

const (
	sessionCookie = "rx_session"
	// loginCookie holds the sign-in form's anti-forgery value before there
	// is a session: a page elsewhere cannot sign a browser in as someone
	// else, because it can neither read nor set this cookie.
	loginCookie = "rx_login"
	maxForm     = 64 << 10
)

// session is the signed-in person of a request.
type session struct {
	secret    string
	principal runner.Principal
	csrf      string
	expires   time.Time
}

type sessionKey struct{}

// signedIn finds the request's session; without one a page visit goes to
// the sign-in form and anything else is refused. A state-changing request
// must carry the session's CSRF token and come from this origin.
func (d *Dashboard) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := d.sessionOf(r)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				d.problem(w, r, nil, http.StatusInternalServerError, d.logRef(r, err))
				return
			}
			if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/live") {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			d.problem(w, r, nil, http.StatusUnauthorized, "You are not signed in, or your session ended. Sign in again.")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if !sameOrigin(r) || !equalSecret(r.PostFormValue("csrf"), s.csrf) {
				d.problem(w, r, s, http.StatusForbidden, "This request did not come from a page of this dashboard (missing or wrong CSRF token); nothing was changed. Reload the page and try again.")
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)), s)
	})
}

func (d *Dashboard) sessionOf(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, store.ErrNotFound
	}
	ws, err := d.st.WebSessionBySecret(r.Context(), c.Value)
	if err != nil {
		return nil, err
	}
	t := ws.Token
	return &session{secret: c.Value, csrf: ws.CSRF, expires: ws.ExpiresAt,
		principal: runner.Principal{ID: t.Principal(), Role: t.Role, MaxPosture: t.MaxPosture}}, nil
}

// sameOrigin refuses a request a browser marks as coming from another
// site. Browsers send Origin on every POST; a request without one (a
// script, not a browser) still needs the CSRF token.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func equalSecret(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (d *Dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: d.secure || r.TLS != nil}
	if value == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}

// loginPage shows the sign-in form, with a fresh anti-forgery value.
func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	if s, err := d.sessionOf(r); err == nil && s != nil {
		http.Redirect(w, r, nextPage(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	d.renderLogin(w, r, http.StatusOK, "")
}

func (d *Dashboard) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	v := ids.Hex(32)
	d.setCookie(w, r, loginCookie, v, time.Now().Add(time.Hour))
	d.render(w, r, status, "login", nil, map[string]any{"LoginCSRF": v, "Problem": problem,
		"Next": nextPage(r.FormValue("next"))})
}

// loginWithToken signs in with an API token typed into the form.
func (d *Dashboard) loginWithToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	c, err := r.Cookie(loginCookie)
	if !sameOrigin(r) || err != nil || !equalSecret(r.PostFormValue("login_csrf"), c.Value) {
		d.renderLogin(w, r, http.StatusForbidden, "The sign-in form expired or came from elsewhere; try again.")
		return
	}
	t, err := d.st.Authenticate(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
	if errors.Is(err, store.ErrNotFound) {
		d.renderLogin(w, r, http.StatusUnauthorized, "That token is not valid (unknown or revoked).")
		return
	}
	if err != nil {
		d.problem(w, r, nil, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.startSession(w, r, t, nextPage(r.PostFormValue("next")))
}

// loginLinkPage is where a link from `reasonix login-link` lands: a page
// whose Sign in button posts the code. Opening the link spends nothing,
// because chat link previews and mail scanners fetch the URLs they see,
// and one of them must not use up a person's link before the person does.
func (d *Dashboard) loginLinkPage(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if !looksLikeLoginCode(code) {
		d.badLoginLink(w, r)
		return
	}
	d.render(w, r, http.StatusOK, "loginlink", nil, map[string]any{"Code": code})
}

// loginWithCode spends a one-time code posted by the link's page and signs
// in as its token, sending the browser on to a URL without the code. The
// code itself is the form's secret; the origin check keeps a page
// elsewhere that holds a code from signing this browser in as someone
// else, and refuses before anything is spent.
func (d *Dashboard) loginWithCode(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if !sameOrigin(r) {
		d.problem(w, r, nil, http.StatusForbidden, "This sign-in did not come from this dashboard's own page, so the link was not used. "+
			"Open the link again and press Sign in.")
		return
	}
	code := r.PostFormValue("code")
	if !looksLikeLoginCode(code) {
		d.badLoginLink(w, r)
		return
	}
	t, err := d.st.ConsumeLoginCode(r.Context(), code)
	if errors.Is(err, store.ErrNotFound) {
		d.badLoginLink(w, r)
		return
	}
	if err != nil {
		d.problem(w, r, nil, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.startSession(w, r, t, "/")
}

func (d *Dashboard) badLoginLink(w http.ResponseWriter, r *http.Request) {
	d.problem(w, r, nil, http.StatusUnauthorized, "This sign-in link is unknown, used already or expired. "+
		"Print a new one with `reasonix login-link`, or sign in with a token.")
}

// looksLikeLoginCode is the form store.CreateLoginCode gives a code, so
// nothing else is echoed into a page or looked up.
func looksLikeLoginCode(code string) bool {
	digits, ok := strings.CutPrefix(code, store.LoginCodePrefix)
	return ok && len(digits) == 64 && strings.Trim(digits, "0123456789abcdef") == ""
}

func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, t store.Token, next string) {
	secret, ws, err := d.st.CreateWebSession(r.Context(), t, d.ttl)
	if err != nil {
		d.problem(w, r, nil, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.setCookie(w, r, loginCookie, "", time.Time{})
	d.setCookie(w, r, sessionCookie, secret, ws.ExpiresAt)
	d.log.Info("dashboard: signed in", "principal", t.Principal())
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := d.st.DeleteWebSession(r.Context(), s.secret); err != nil {
		d.problem(w, r, s, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.setCookie(w, r, sessionCookie, "", time.Time{})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// nextPage keeps a post-sign-in destination on this site: a path, never
// another host ("//evil", "/\evil"). Browsers drop tabs and newlines in a
// URL and read a backslash as a slash, so a path holding any of them is
// refused whole.
func nextPage(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/login") ||
		strings.ContainsRune(p, '\\') || strings.ContainsFunc(p, unicode.IsControl) {
		return "/"
	}
	return p
}
