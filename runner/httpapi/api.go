// Package httpapi is the runner's HTTP API: tasks, their events (as JSON
// and as a server-sent event stream), cancellation, steering, resumption,
// approvals and schedules under /api/v1 behind a bearer token that names a
// principal (see runner.Principal), plus /healthz, /readyz and
// /metrics. Errors are JSON {code, message}; bad input is a 4xx that changes
// nothing; a 5xx carries a reference id that the log line with the detail
// also carries. The bodies are runner/apitype's records, which the Go
// client (runner/client) decodes.
package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/webhook"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// Config assembles the API handler.
type Config struct {
	// Service is the runner; required.
	Service *runner.Service
	// Logger receives request failures; nil uses slog.Default().
	Logger *slog.Logger
	// KeepAlive is the interval of SSE keep-alive comments; default 15s.
	KeepAlive time.Duration
	// MaxStreamsPerToken caps the event streams one bearer token holds open
	// at once; more are refused with 429. 0 means DefaultMaxStreamsPerToken.
	MaxStreamsPerToken int
	// Webhooks, when set, serves POST /hooks/{name} (authenticated by each
	// delivery's signature, not the bearer token) and GET /api/v1/webhooks.
	Webhooks *webhook.Handler
	// Dashboard, when set, serves every path no other route claims (the
	// web dashboard at /, which authenticates by its own session cookie).
	Dashboard http.Handler
}

// API serves the routes. Build it with New.
type API struct {
	svc       *runner.Service
	log       *slog.Logger
	keepAlive time.Duration
	mux       *http.ServeMux
	streams   *streamLimiter
	hooks     *webhook.Handler
}

// New validates cfg and returns the API; use it as an http.Handler.
func New(cfg Config) (*API, error) {
	if cfg.Service == nil {
		return nil, errors.New("httpapi: a runner service is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.MaxStreamsPerToken < 0 {
		return nil, fmt.Errorf("httpapi: max streams per token must not be negative, got %d", cfg.MaxStreamsPerToken)
	}
	a := &API{svc: cfg.Service, log: cfg.Logger, keepAlive: cfg.KeepAlive, mux: http.NewServeMux(), hooks: cfg.Webhooks,
		streams: newStreamLimiter(cmp.Or(cfg.MaxStreamsPerToken, DefaultMaxStreamsPerToken))}
	a.mux.HandleFunc("GET /healthz", a.healthz)
	a.mux.HandleFunc("GET /readyz", a.readyz)
	a.mux.Handle("GET /metrics", cfg.Service.Metrics())
	api := func(pattern string, h http.HandlerFunc) { a.mux.Handle(pattern, a.auth(h)) }
	api("POST /api/v1/tasks", a.createTask)
	api("GET /api/v1/tasks", a.listTasks)
	api("GET /api/v1/tasks/{id}", a.getTask)
	api("GET /api/v1/tasks/{id}/events", a.events)
	api("GET /api/v1/tasks/{id}/diff", a.diff)
	api("GET /api/v1/tasks/{id}/events/stream", a.stream)
	api("POST /api/v1/tasks/{id}/cancel", a.cancel)
	api("POST /api/v1/tasks/{id}/messages", a.message)
	api("POST /api/v1/tasks/{id}/resume", a.resume)
	api("GET /api/v1/approvals", a.listApprovals)
	api("POST /api/v1/approvals/{id}", a.decide)
	api("GET /api/v1/grants", a.listGrants)
	api("DELETE /api/v1/grants/{id}", a.revokeGrant)
	api("GET /api/v1/memories", a.listMemories)
	api("GET /api/v1/memories/{id}", a.getMemory)
	api("DELETE /api/v1/memories/{id}", a.forgetMemory)
	api("GET /api/v1/schedules", a.listSchedules)
	api("POST /api/v1/schedules/{name}/run", a.runSchedule)
	api("POST /api/v1/schedules/{name}/pause", a.pauseSchedule)
	api("POST /api/v1/schedules/{name}/resume", a.resumeSchedule)
	api("GET /api/v1/nodes", a.listNodes)
	api("GET /api/v1/workspaces", a.listWorkspaces)
	api("POST /api/v1/gc", a.gc)
	if a.hooks != nil {
		a.mux.Handle("POST /hooks/{name}", a.hooks)
		api("GET /api/v1/webhooks", a.listWebhooks)
	}
	if cfg.Dashboard != nil {
		a.mux.Handle("/", cfg.Dashboard)
	}
	api("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apitype.CodeNotFound, "no such API route")
	})
	return a, nil
}

// ServeHTTP routes the request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

func (a *API) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, apitype.Status{Status: "ok"})
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	if err := a.svc.Ready(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, apitype.CodeUnavailable, "the service is not ready")
		return
	}
	writeJSON(w, http.StatusOK, apitype.Status{Status: "ready"})
}

// NewServer returns an http.Server for h with timeouts that keep slow
// clients from holding connections. WriteTimeout is set too; the SSE route
// lifts it per request with http.ResponseController, so only event streams
// stay open.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}
