// Package dashboard is the web dashboard `reasonix serve` shows at /: tasks,
// a task's live progress (its pull request's checks too), approvals (budget
// cards included), schedules, nodes and what tasks remember, for a person
// signed in as a principal. Pages are rendered on the server with
// html/template; the little JavaScript there is (local times, countdowns,
// live events) and the CSS are embedded, so the binary needs nothing at run
// time and the browser loads nothing from elsewhere.
//
// Sign-in takes an API token (typed into a form) or a one-time link from
// `reasonix login-link`, whose page spends the code only when its Sign in
// button is pressed (a POST), never on the GET. Either starts a session kept server-side as a
// hash, named by an HttpOnly, SameSite=Strict cookie, bound to the token:
// revoking the token ends its sessions, and its current role is what the
// session may do. Every state-changing request carries the session's CSRF
// token and a same-origin Origin; every response carries a strict
// Content-Security-Policy. What a person may do goes through the same
// runner functions as the HTTP API (runner.Principal.MayControl,
// runner.Service.Decide, ...), so the page cannot allow more than the API.
package dashboard

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"reasonix/runner"
	"reasonix/runner/store"
	"reasonix/runner/webhook"
)

// DefaultSessionTTL is how long a sign-in lasts when Config does not say.
const DefaultSessionTTL = 12 * time.Hour

// Config assembles the dashboard.
type Config struct {
	// Service is the runner; required.
	Service *runner.Service
	// Store keeps sessions and login codes; required (the Service's store).
	Store *store.Store
	// Logger receives failures; nil uses slog.Default().
	Logger *slog.Logger
	// SessionTTL is how long a sign-in lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
	// SecureCookies marks cookies Secure even on plain HTTP requests, for a
	// service behind a TLS-terminating proxy. Requests that arrive over TLS
	// get Secure cookies anyway.
	SecureCookies bool
	// Webhooks, when set, lists the configured webhooks and their recent
	// deliveries for the Webhooks page (the service's *webhook.Handler).
	Webhooks WebhookLister
	// KeepAlive is the interval of comments on a live event stream; 0 means
	// 15s.
	KeepAlive time.Duration
}

// WebhookLister lists the configured webhooks with at most recent
// deliveries each, newest first.
type WebhookLister interface {
	List(ctx context.Context, recent int) ([]webhook.Summary, error)
}

// WebhookListerFunc adapts a function to WebhookLister.
type WebhookListerFunc func(ctx context.Context, recent int) ([]webhook.Summary, error)

// List calls f.
func (f WebhookListerFunc) List(ctx context.Context, recent int) ([]webhook.Summary, error) {
	return f(ctx, recent)
}

// Dashboard serves the pages; use it as an http.Handler. Build it with New.
type Dashboard struct {
	svc       *runner.Service
	hooks     WebhookLister
	st        *store.Store
	log       *slog.Logger
	ttl       time.Duration
	secure    bool
	keepAlive time.Duration
	pages     map[string]*template.Template
	eventTmpl *template.Template
	mux       *http.ServeMux
	streams   streamCount
}

// New validates cfg and returns the dashboard.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Service == nil || cfg.Store == nil {
		return nil, errors.New("dashboard: a runner service and its store are required")
	}
	if cfg.SessionTTL < 0 {
		return nil, errors.New("dashboard: the session lifetime must not be negative")
	}
	d := &Dashboard{svc: cfg.Service, st: cfg.Store, log: cmp.Or(cfg.Logger, slog.Default()),
		ttl: cmp.Or(cfg.SessionTTL, DefaultSessionTTL), secure: cfg.SecureCookies, hooks: cfg.Webhooks,
		keepAlive: cmp.Or(cfg.KeepAlive, 15*time.Second), mux: http.NewServeMux()}
	if err := d.parseTemplates(); err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	d.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	d.mux.HandleFunc("GET /login", d.loginPage)
	d.mux.HandleFunc("POST /login", d.loginWithToken)
	d.mux.HandleFunc("GET /login/link", d.loginLinkPage)
	d.mux.HandleFunc("POST /login/link", d.loginWithCode)
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, *session)) {
		d.mux.Handle(pattern, d.signedIn(h))
	}
	page("POST /logout", d.logout)
	page("GET /{$}", d.tasksPage)
	page("GET /tasks/{id}", d.taskPage)
	page("GET /tasks/{id}/live", d.live)
	page("GET /tasks/{id}/steps/{seq}", d.stepPage)
	page("POST /tasks/{id}/cancel", d.cancel)
	page("POST /tasks/{id}/resume", d.resume)
	page("POST /tasks/{id}/message", d.message)
	page("GET /approvals", d.approvalsPage)
	page("GET /approvals/count", d.pendingJSON)
	page("POST /approvals/{id}", d.decide)
	page("GET /schedules", d.schedulesPage)
	page("POST /schedules/{name}/{action}", d.scheduleAction)
	page("GET /nodes", d.nodesPage)
	page("GET /webhooks", d.webhooksPage)
	page("GET /grants", d.grantsPage)
	page("POST /grants/{id}/revoke", d.revokeGrant)
	page("GET /memories", d.memoriesPage)
	page("POST /memories/{id}/forget", d.forgetMemory)
	d.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.problem(w, r, nil, http.StatusNotFound, "There is no such page.")
	})
	return d, nil
}

// csp allows the page's own script, style and connections and nothing
// else: no inline script, no framing, no form posts elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers every answer carries, then routes.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// A login link's code must not travel to another site in a Referer.
	// (Not no-referrer: with it Chromium sends "Origin: null" on the
	// page's own form posts, which sameOrigin must refuse.)
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	d.mux.ServeHTTP(w, r)
}
