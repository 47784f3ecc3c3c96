package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"reasonix/policy"
	"reasonix/runner"
	"reasonix/runner/store"
)

// taskView is a task as the API shows it.
type taskView struct {
	ID         string               `json:"id"`
	Source     store.Source         `json:"source"`
	Requester  string               `json:"requester"`
	Prompt     string               `json:"prompt"`
	Goal       bool                 `json:"goal"`
	PlanFirst  bool                 `json:"plan_first"`
	BudgetUSD  float64              `json:"budget_usd,omitempty"`
	Workspace  string               `json:"workspace"`
	Posture    policy.Posture       `json:"posture"`
	Notify     []store.NotifyTarget `json:"notify"`
	Approvers  []string             `json:"approvers"`
	State      store.State          `json:"state"`
	Attempt    int                  `json:"attempt"`
	Result     *store.Result        `json:"result,omitempty"`
	CreatedAt  time.Time            `json:"created_at"`
	UpdatedAt  time.Time            `json:"updated_at"`
	StartedAt  *time.Time           `json:"started_at,omitempty"`
	FinishedAt *time.Time           `json:"finished_at,omitempty"`
}

func viewTask(t store.Task) taskView {
	v := taskView{ID: t.ID, Source: t.Source, Requester: t.Requester, Prompt: t.Prompt, Goal: t.Goal,
		PlanFirst: t.PlanFirst, BudgetUSD: t.BudgetUSD, Workspace: t.Workspace, Posture: t.Posture, Notify: t.Notify,
		Approvers: t.Approvers, State: t.State, Attempt: t.Attempt, Result: t.Result,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if !t.StartedAt.IsZero() {
		v.StartedAt = &t.StartedAt
	}
	if !t.FinishedAt.IsZero() {
		v.FinishedAt = &t.FinishedAt
	}
	if v.Notify == nil {
		v.Notify = []store.NotifyTarget{}
	}
	if v.Approvers == nil {
		v.Approvers = []string{}
	}
	return v
}

// createRequest is the body of POST /api/v1/tasks.
type createRequest struct {
	Prompt string `json:"prompt"`
	// Command names a custom command of the workspace; its rendered body
	// is the prompt (Prompt, when also set, follows it).
	Command   string               `json:"command"`
	Args      []string             `json:"args"`
	Goal      bool                 `json:"goal"`
	PlanFirst bool                 `json:"plan_first"`
	BudgetUSD float64              `json:"budget_usd"`
	Workspace string               `json:"workspace"`
	Posture   string               `json:"posture"` // parsed by toTaskRequest
	Notify    []store.NotifyTarget `json:"notify"`
	Approvers []string             `json:"approvers"`
	// Source is "api" (default) or "cli" (the reasonix CLI).
	Source string `json:"source"`
	// Requester is refused: the requester is the token's principal.
	Requester *string `json:"requester"`
}

// toTaskRequest validates the parts the runner does not know about.
func (c createRequest) toTaskRequest(p runner.Principal, idempotencyKey string) (runner.TaskRequest, string) {
	src := store.SourceAPI
	switch c.Source {
	case "", "api":
	case "cli":
		src = store.SourceCLI
	default:
		return runner.TaskRequest{}, `source must be "api" or "cli"`
	}
	posture, err := policy.ParsePosture(c.Posture)
	if err != nil {
		return runner.TaskRequest{}, err.Error()
	}
	return runner.TaskRequest{Source: src, Requester: p.ID, MaxPosture: p.MaxPosture, Prompt: c.Prompt,
		Command: c.Command, Args: c.Args, Goal: c.Goal, PlanFirst: c.PlanFirst, BudgetUSD: c.BudgetUSD,
		Workspace: c.Workspace, Posture: posture, Notify: c.Notify,
		Approvers: c.Approvers, DedupeKey: idempotencyKey}, ""
}

func (a *API) createTask(w http.ResponseWriter, r *http.Request) {
	var body createRequest
	if !decode(w, r, &body) || refuseClaimedIdentity(w, r, "requester", body.Requester != nil) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 256 {
		writeError(w, http.StatusBadRequest, "invalid", "the Idempotency-Key header is limited to 256 bytes")
		return
	}
	req, problem := body.toTaskRequest(principalOf(r), key)
	if problem != "" {
		writeError(w, http.StatusBadRequest, "invalid", problem)
		return
	}
	task, created, err := a.svc.Submit(r.Context(), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	status := http.StatusAccepted
	if !created {
		status = http.StatusOK
	}
	w.Header().Set("Location", "/api/v1/tasks/"+task.ID)
	writeJSON(w, status, map[string]any{"id": task.ID, "state": task.State, "created": created})
}

func (a *API) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f store.TaskFilter
	if s := q.Get("state"); s != "" {
		for _, st := range strings.Split(s, ",") {
			if !validState(store.State(st)) {
				writeError(w, http.StatusBadRequest, "invalid", "unknown state "+strconv.Quote(st))
				return
			}
			f.States = append(f.States, store.State(st))
		}
	}
	if s := q.Get("source"); s != "" {
		if !validSource(store.Source(s)) {
			writeError(w, http.StatusBadRequest, "invalid", "unknown source "+strconv.Quote(s))
			return
		}
		f.Source = store.Source(s)
	}
	f.Cursor = q.Get("cursor")
	if len(f.Cursor) > 64 {
		writeError(w, http.StatusBadRequest, "invalid", "the cursor is not one this API returned")
		return
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			writeError(w, http.StatusBadRequest, "invalid", "limit must be 1..500")
			return
		}
		f.Limit = n
	}
	page, err := a.svc.Tasks(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]taskView, len(page.Tasks))
	for i, t := range page.Tasks {
		views[i] = viewTask(t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": views, "next_cursor": page.Next})
}

func validState(s store.State) bool {
	switch s {
	case store.StateQueued, store.StateRunning, store.StateWaitingApproval, store.StateSucceeded, store.StateFailed,
		store.StateBlocked, store.StateCancelled, store.StateInterrupted, store.StateBudgetExhausted:
		return true
	}
	return false
}

func validSource(s store.Source) bool {
	switch s {
	case store.SourceAPI, store.SourceCLI, store.SourceWebhook, store.SourceCron, store.SourceSlack, store.SourceTelegram:
		return true
	}
	return false
}

func (a *API) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := a.svc.Task(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewTask(t))
}

// eventView is an event as the API shows it.
type eventView struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	Time    time.Time       `json:"time"`
}

func viewEvent(e store.Event) eventView {
	return eventView{Seq: e.Seq, Type: e.Type, Payload: e.Payload, Time: e.Time}
}

func (a *API) events(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		a.stream(w, r)
		return
	}
	after, ok := afterParam(w, r)
	if !ok {
		return
	}
	limit := 1000
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid", "limit must be 1..1000")
			return
		}
		limit = n
	}
	evs, err := a.svc.Events(r.Context(), r.PathValue("id"), after, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]eventView, len(evs))
	for i, e := range evs {
		views[i] = viewEvent(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": views})
}

// afterParam reads ?after=N, falling back to the Last-Event-ID header of a
// reconnecting event stream.
func afterParam(w http.ResponseWriter, r *http.Request) (int64, bool) {
	s := r.URL.Query().Get("after")
	if s == "" {
		s = r.Header.Get("Last-Event-ID")
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, "invalid", "after must be a non-negative event number")
		return 0, false
	}
	return n, true
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request) {
	if !a.ownTask(w, r, r.PathValue("id")) {
		return
	}
	t, err := a.svc.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": t.ID, "state": t.State})
}

// messageRequest is the body of POST /api/v1/tasks/{id}/messages.
type messageRequest struct {
	Text string `json:"text"`
	// Requester is refused: the sender is the token's principal.
	Requester *string `json:"requester"`
}

func (a *API) message(w http.ResponseWriter, r *http.Request) {
	var body messageRequest
	if !decode(w, r, &body) || refuseClaimedIdentity(w, r, "requester", body.Requester != nil) {
		return
	}
	// Message checks that the principal may control the task (403 if not).
	t, err := a.svc.Message(r.Context(), r.PathValue("id"), principalOf(r), body.Text)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": t.ID, "state": t.State})
}

func (a *API) resume(w http.ResponseWriter, r *http.Request) {
	if !a.ownTask(w, r, r.PathValue("id")) {
		return
	}
	t, err := a.svc.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": t.ID, "state": t.State})
}
