// Package client is a typed Go client of the runner's HTTP API (/api/v1):
// submit tasks, read them and their events, follow a task's event stream,
// steer, cancel and resume tasks, list and decide approvals, run and pause
// schedules, and read the nodes and webhooks. The `reasonix` CLI's client
// commands use it for every call, and a Go program can import it to drive
// a Reasonix service the same way.
//
// The records are those of runner/apitype, which the server encodes. A
// refusal by the service is an *Error carrying the HTTP status and the
// service's error code; errors.Is matches it against ErrNotFound,
// ErrForbidden and the other sentinels. A failure to reach the service is
// net/http's error (a *url.Error), wrapped.
//
// The package links nothing of the service: only the standard library and
// runner/apitype.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"reasonix/runner/apitype"
)

// Client talks to one service as one principal (the bearer token's). It
// is safe for concurrent use.
type Client struct {
	base    string // scheme://host[:port][/prefix], no trailing slash
	token   string
	hc      *http.Client
	timeout time.Duration
	// watchRetries is how many times in a row Watch reconnects before it
	// gives up; watchWait the first wait between tries.
	watchRetries int
	watchWait    time.Duration
}

// Option configures New.
type Option func(*Client)

// WithHTTPClient sends the requests through hc (a custom transport, TLS
// settings, a proxy). hc's Timeout applies to event streams too and would
// cut Watch short: prefer WithTimeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithTimeout bounds each request but the event stream (Watch), which has
// no end of its own; 0, the default, leaves the bound to each call's
// context.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithWatchRetries sets how many times in a row Watch reconnects a dropped
// stream, waiting wait, then twice that, and so on, before it reports the
// failure. The default is 5 tries from 200ms.
func WithWatchRetries(n int, wait time.Duration) Option {
	return func(c *Client) { c.watchRetries, c.watchWait = n, wait }
}

// New returns a client of the service at baseURL (e.g.
// "http://127.0.0.1:8080") authenticating with the bearer token.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http(s) URL", baseURL)
	}
	if strings.TrimSpace(token) == "" {
		return nil, errors.New("client: a bearer token is required")
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: strings.TrimSpace(token), hc: http.DefaultClient,
		watchRetries: 5, watchWait: 200 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL is the service's address as New was given it, without a
// trailing slash.
func (c *Client) BaseURL() string { return c.base }

// Error is the service's answer to a request it refused: the HTTP status
// and the body's code (apitype.CodeNotFound, …), message and, for a 5xx,
// the reference of the service's log line. An answer that is not the API's
// error body (a proxy's page) has the status text as its code.
type Error struct {
	Status  int
	Code    string
	Message string
	Ref     string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("the service answered %d %s: %s", e.Status, e.Code, e.Message)
	if e.Ref != "" {
		msg += " (reference " + e.Ref + ")"
	}
	return msg
}

// Is matches the sentinels below by code, so errors.Is(err, ErrNotFound)
// holds for any not_found answer.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == 0 && t.Code == e.Code
}

// Sentinels for errors.Is; each matches an *Error with its code.
var (
	ErrInvalid        = &Error{Code: apitype.CodeInvalid}
	ErrUnauthorized   = &Error{Code: apitype.CodeUnauthorized}
	ErrForbidden      = &Error{Code: apitype.CodeForbidden}
	ErrNotFound       = &Error{Code: apitype.CodeNotFound}
	ErrConflict       = &Error{Code: apitype.CodeConflict}
	ErrExpired        = &Error{Code: apitype.CodeExpired}
	ErrTooManyStreams = &Error{Code: apitype.CodeTooManyStreams}
	ErrUnavailable    = &Error{Code: apitype.CodeUnavailable}
)

// request builds a request to path (which carries its query) with the
// token and, when body is not nil, body as JSON.
func (c *Client) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// send sends req; an answer of 300 or above becomes an *Error.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the service: %w", err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, errorOf(resp)
	}
	return resp, nil
}

// errorOf reads an error answer.
func errorOf(resp *http.Response) *Error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body apitype.Error
	if json.Unmarshal(data, &body) != nil || body.Code == "" {
		return &Error{Status: resp.StatusCode, Code: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(data))}
	}
	return &Error{Status: resp.StatusCode, Code: body.Code, Message: body.Message, Ref: body.Ref}
}

// do sends a request and decodes the JSON answer into out (unless nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any, hdr ...string) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading the service's answer: %w", err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the service's answer to %s %s is not what the API returns: %w", method, req.URL.Path, err)
	}
	return nil
}

func taskPath(id string, rest ...string) string {
	return "/api/v1/tasks/" + url.PathEscape(id) + strings.Join(rest, "")
}

// SubmitOption refines Submit.
type SubmitOption func(*submitOptions)

type submitOptions struct{ key string }

// IdempotencyKey makes a repeated Submit with the same key (at most 256
// bytes) answer with the task the first one created, Created false,
// instead of creating another.
func IdempotencyKey(key string) SubmitOption { return func(o *submitOptions) { o.key = key } }

// Submit hands the service a task (POST /api/v1/tasks). Its requester is
// the token's principal.
func (c *Client) Submit(ctx context.Context, req apitype.SubmitRequest, opts ...SubmitOption) (apitype.Submitted, error) {
	var o submitOptions
	for _, opt := range opts {
		opt(&o)
	}
	var hdr []string
	if o.key != "" {
		hdr = []string{"Idempotency-Key", o.key}
	}
	var out apitype.Submitted
	err := c.do(ctx, http.MethodPost, "/api/v1/tasks", req, &out, hdr...)
	return out, err
}

// Task reads one task (GET /api/v1/tasks/{id}).
func (c *Client) Task(ctx context.Context, id string) (apitype.Task, error) {
	var t apitype.Task
	err := c.do(ctx, http.MethodGet, taskPath(id), nil, &t)
	return t, err
}

// TaskFilter narrows Tasks; the zero value lists the newest tasks.
type TaskFilter struct {
	States []apitype.TaskState // any of these; none means all
	Source apitype.Source
	Cursor string // a TaskPage's NextCursor
	Limit  int    // 1..500; 0 means the service's default
}

// Tasks lists tasks, newest first, a page at a time (GET /api/v1/tasks).
// Diff returns task id's changes against its base (GET
// /api/v1/tasks/{id}/diff).
func (c *Client) Diff(ctx context.Context, id string) (apitype.Diff, error) {
	var d apitype.Diff
	err := c.do(ctx, http.MethodGet, taskPath(id, "/diff"), nil, &d)
	return d, err
}

func (c *Client) Tasks(ctx context.Context, f TaskFilter) (apitype.TaskPage, error) {
	q := url.Values{}
	if len(f.States) > 0 {
		s := make([]string, len(f.States))
		for i, st := range f.States {
			s[i] = string(st)
		}
		q.Set("state", strings.Join(s, ","))
	}
	if f.Source != "" {
		q.Set("source", string(f.Source))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var page apitype.TaskPage
	err := c.do(ctx, http.MethodGet, "/api/v1/tasks"+query(q), nil, &page)
	return page, err
}

// Events reads task id's stored events with a sequence number above after,
// at most limit of them (1..1000; 0 means 1000).
func (c *Client) Events(ctx context.Context, id string, after int64, limit int) ([]apitype.Event, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var list apitype.EventList
	err := c.do(ctx, http.MethodGet, taskPath(id, "/events")+query(q), nil, &list)
	return list.Events, err
}

// Cancel asks the service to cancel a queued, running or waiting task; the
// task's requester or an admin may.
func (c *Client) Cancel(ctx context.Context, id string) (apitype.TaskRef, error) {
	var ref apitype.TaskRef
	err := c.do(ctx, http.MethodPost, taskPath(id, "/cancel"), struct{}{}, &ref)
	return ref, err
}

// Resume requeues an interrupted task, or one out of budget with a fresh
// budget; the task's requester or an admin may.
func (c *Client) Resume(ctx context.Context, id string) (apitype.TaskRef, error) {
	var ref apitype.TaskRef
	err := c.do(ctx, http.MethodPost, taskPath(id, "/resume"), struct{}{}, &ref)
	return ref, err
}

// Message steers a running task, answers a goal's question or continues a
// finished task with text; the task's requester or an admin may.
func (c *Client) Message(ctx context.Context, id, text string) (apitype.TaskRef, error) {
	var ref apitype.TaskRef
	err := c.do(ctx, http.MethodPost, taskPath(id, "/messages"), apitype.MessageRequest{Text: text}, &ref)
	return ref, err
}

// ApprovalFilter narrows Approvals; the zero value lists recent ones in
// every state.
type ApprovalFilter struct {
	State  apitype.ApprovalState
	TaskID string
	Limit  int // 1..1000; 0 means the service's default
}

// Approvals lists approvals (GET /api/v1/approvals).
func (c *Client) Approvals(ctx context.Context, f ApprovalFilter) ([]apitype.Approval, error) {
	q := url.Values{}
	if f.State != "" {
		q.Set("state", string(f.State))
	}
	if f.TaskID != "" {
		q.Set("task", f.TaskID)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var list apitype.ApprovalList
	err := c.do(ctx, http.MethodGet, "/api/v1/approvals"+query(q), nil, &list)
	return list.Approvals, err
}

// Approval finds one approval by id. The API has no route for a single
// approval, so the pending ones are searched first, then the 1000 most
// recent; one in neither is an *Error matching ErrNotFound.
func (c *Client) Approval(ctx context.Context, id string) (apitype.Approval, error) {
	for _, f := range []ApprovalFilter{{State: apitype.ApprovalPending, Limit: 1000}, {Limit: 1000}} {
		list, err := c.Approvals(ctx, f)
		if err != nil {
			return apitype.Approval{}, err
		}
		for _, a := range list {
			if a.ID == id {
				return a, nil
			}
		}
	}
	return apitype.Approval{}, &Error{Status: http.StatusNotFound, Code: apitype.CodeNotFound,
		Message: "approval " + id + " not found"}
}

// Decide decides approval id as the token's principal and returns the
// decided approval. A conflict (already decided, another call) matches
// ErrConflict, an expired approval ErrExpired.
func (c *Client) Decide(ctx context.Context, id string, d apitype.DecideRequest) (apitype.Approval, error) {
	var a apitype.Approval
	err := c.do(ctx, http.MethodPost, "/api/v1/approvals/"+url.PathEscape(id), d, &a)
	return a, err
}

// GrantFilter selects standing grants for Grants. Zero fields do not
// filter.
type GrantFilter struct {
	GrantFor string // workspace, schedule or webhook
	Name     string
	All      bool // revoked ones too
}

// Grants lists the standing grants ("Allow always"), oldest first.
func (c *Client) Grants(ctx context.Context, f GrantFilter) ([]apitype.Grant, error) {
	q := url.Values{}
	if f.GrantFor != "" {
		q.Set("grant_for", f.GrantFor)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.All {
		q.Set("all", "true")
	}
	var list apitype.GrantList
	err := c.do(ctx, http.MethodGet, "/api/v1/grants"+query(q), nil, &list)
	return list.Grants, err
}

// RevokeGrant ends standing grant id (the grant or admin role) and returns
// it as it now stands.
func (c *Client) RevokeGrant(ctx context.Context, id string) (apitype.Grant, error) {
	var g apitype.Grant
	err := c.do(ctx, http.MethodDelete, "/api/v1/grants/"+url.PathEscape(id), nil, &g)
	return g, err
}

// MemoryFilter selects memories for Memories. Zero fields do not filter.
type MemoryFilter struct {
	Scope string // workspace:<name> or user:<principal>
	All   bool   // forgotten ones too
	Limit int    // 0 is the service's default (200)
}

// Memories lists the memories the token may see, newest first.
func (c *Client) Memories(ctx context.Context, f MemoryFilter) ([]apitype.Memory, error) {
	q := url.Values{}
	if f.Scope != "" {
		q.Set("scope", f.Scope)
	}
	if f.All {
		q.Set("all", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var list apitype.MemoryList
	err := c.do(ctx, http.MethodGet, "/api/v1/memories"+query(q), nil, &list)
	return list.Memories, err
}

// Memory returns memory id; one the token may not see is ErrNotFound.
func (c *Client) Memory(ctx context.Context, id string) (apitype.Memory, error) {
	var m apitype.Memory
	err := c.do(ctx, http.MethodGet, "/api/v1/memories/"+url.PathEscape(id), nil, &m)
	return m, err
}

// ForgetMemory forgets memory id and returns it as it now is.
func (c *Client) ForgetMemory(ctx context.Context, id string) (apitype.Memory, error) {
	var m apitype.Memory
	err := c.do(ctx, http.MethodDelete, "/api/v1/memories/"+url.PathEscape(id), nil, &m)
	return m, err
}

// Schedules lists the configured schedules and their state.
func (c *Client) Schedules(ctx context.Context) ([]apitype.Schedule, error) {
	var list apitype.ScheduleList
	err := c.do(ctx, http.MethodGet, "/api/v1/schedules", nil, &list)
	return list.Schedules, err
}

// RunSchedule starts a run of schedule name now (an admin token is needed).
func (c *Client) RunSchedule(ctx context.Context, name string) (apitype.ScheduleRun, error) {
	var run apitype.ScheduleRun
	err := c.do(ctx, http.MethodPost, "/api/v1/schedules/"+url.PathEscape(name)+"/run", nil, &run)
	return run, err
}

// GC runs garbage collection on the node that answers (admin): its
// finished tasks' directories and branches past [runner] keep_worktrees
// and the store's history past [runner] retain. With dryRun it removes
// nothing and reports what it would.
//
// The client's per-request timeout (WithTimeout) does not apply: a first
// prune of a long history takes minutes, and stopping the wait half-way
// helps nobody (what was removed stays removed). ctx bounds the wait.
func (c *Client) GC(ctx context.Context, dryRun bool) (apitype.GCReport, error) {
	var rep apitype.GCReport
	long := *c
	long.timeout = 0
	err := long.do(ctx, http.MethodPost, "/api/v1/gc", apitype.GCRequest{DryRun: dryRun}, &rep)
	return rep, err
}

// PauseSchedule stops schedule name from firing until resumed (admin).
func (c *Client) PauseSchedule(ctx context.Context, name string) (apitype.Schedule, error) {
	var s apitype.Schedule
	err := c.do(ctx, http.MethodPost, "/api/v1/schedules/"+url.PathEscape(name)+"/pause", nil, &s)
	return s, err
}

// ResumeSchedule lets a paused schedule fire again from now on (admin).
func (c *Client) ResumeSchedule(ctx context.Context, name string) (apitype.Schedule, error) {
	var s apitype.Schedule
	err := c.do(ctx, http.MethodPost, "/api/v1/schedules/"+url.PathEscape(name)+"/resume", nil, &s)
	return s, err
}

// Nodes lists the service processes sharing the store.
func (c *Client) Nodes(ctx context.Context) ([]apitype.Node, error) {
	var list apitype.NodeList
	err := c.do(ctx, http.MethodGet, "/api/v1/nodes", nil, &list)
	return list.Nodes, err
}

// Workspaces lists the service's configured workspaces.
func (c *Client) Workspaces(ctx context.Context) ([]apitype.Workspace, error) {
	var list apitype.WorkspaceList
	err := c.do(ctx, http.MethodGet, "/api/v1/workspaces", nil, &list)
	return list.Workspaces, err
}

// Webhooks lists the configured webhooks with at most recent deliveries
// each (1..100; 0 means 10). A service without webhooks answers
// ErrNotFound.
func (c *Client) Webhooks(ctx context.Context, recent int) ([]apitype.Webhook, error) {
	q := url.Values{}
	if recent > 0 {
		q.Set("recent", strconv.Itoa(recent))
	}
	var list apitype.WebhookList
	err := c.do(ctx, http.MethodGet, "/api/v1/webhooks"+query(q), nil, &list)
	return list.Webhooks, err
}

// Health reports nil while the service's process answers (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// Ready reports nil when the service takes work (GET /readyz); one that
// is stopping answers ErrUnavailable.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil)
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
