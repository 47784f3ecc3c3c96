package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"reasonix/policy"
	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// createRequest is the body of POST /api/v1/tasks as it may arrive.
type createRequest struct {
	apitype.SubmitRequest
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
	posture, err := policy.ParsePosture(string(c.Posture))
	if err != nil {
		return runner.TaskRequest{}, err.Error()
	}
	var notify []store.NotifyTarget
	for _, n := range c.Notify {
		notify = append(notify, store.NotifyTarget{Transport: n.Transport, Channel: n.Channel, Thread: n.Thread})
	}
	return runner.TaskRequest{Source: src, Requester: p.ID, MaxPosture: p.MaxPosture, Prompt: c.Prompt,
		Command: c.Command, Args: c.Args, Goal: c.Goal, PlanFirst: c.PlanFirst, PlanOnly: c.PlanOnly, BudgetUSD: c.BudgetUSD, Ablate: c.Ablate,
		Workspace: c.Workspace, Posture: posture, Notify: notify,
		Approvers: c.Approvers, DedupeKey: idempotencyKey}, ""
}

func (a *API) createTask(w http.ResponseWriter, r *http.Request) {
	var body createRequest
	if !decode(w, r, &body) || refuseClaimedIdentity(w, r, "requester", body.Requester != nil) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 256 {
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "the Idempotency-Key header is limited to 256 bytes")
		return
	}
	req, problem := body.toTaskRequest(principalOf(r), key)
	if problem != "" {
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, problem)
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
	writeJSON(w, status, apitype.Submitted{ID: task.ID, State: apitype.TaskState(task.State), Created: created})
}

func (a *API) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f store.TaskFilter
	if s := q.Get("state"); s != "" {
		for _, st := range strings.Split(s, ",") {
			if !validState(store.State(st)) {
				writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "unknown state "+strconv.Quote(st))
				return
			}
			f.States = append(f.States, store.State(st))
		}
	}
	if s := q.Get("source"); s != "" {
		if !validSource(store.Source(s)) {
			writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "unknown source "+strconv.Quote(s))
			return
		}
		f.Source = store.Source(s)
	}
	f.Cursor = q.Get("cursor")
	if len(f.Cursor) > 64 {
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "the cursor is not one this API returned")
		return
	}
	var ok bool
	if f.Limit, ok = intParam(w, r, "limit", 1, 500, 0); !ok {
		return
	}
	page, err := a.svc.Tasks(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]apitype.Task, len(page.Tasks))
	for i, t := range page.Tasks {
		views[i] = viewTask(t)
	}
	writeJSON(w, http.StatusOK, apitype.TaskPage{Tasks: views, NextCursor: page.Next})
}

func validState(s store.State) bool {
	switch s {
	case store.StateQueued, store.StateRunning, store.StateWaitingApproval, store.StateWaitingCI, store.StateSucceeded, store.StateFailed,
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
	d, err := a.svc.Durations(r.Context(), t)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v := viewTask(t)
	v.Durations = &d
	writeJSON(w, http.StatusOK, v)
}

func (a *API) diff(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d, truncated, err := a.svc.Diff(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apitype.Diff{TaskID: id, Branch: "reasonix/" + id, Diff: string(d), Truncated: truncated})
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
	limit, ok := intParam(w, r, "limit", 1, 1000, 1000)
	if !ok {
		return
	}
	evs, err := a.svc.Events(r.Context(), r.PathValue("id"), after, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]apitype.Event, len(evs))
	for i, e := range evs {
		views[i] = viewEvent(e)
	}
	writeJSON(w, http.StatusOK, apitype.EventList{Events: views})
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
		writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "after must be a non-negative event number")
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
	writeJSON(w, http.StatusAccepted, taskRef(t))
}

// messageRequest is the body of POST /api/v1/tasks/{id}/messages as it
// may arrive.
type messageRequest struct {
	apitype.MessageRequest
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
	writeJSON(w, http.StatusAccepted, taskRef(t))
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
	writeJSON(w, http.StatusAccepted, taskRef(t))
}

func taskRef(t store.Task) apitype.TaskRef {
	return apitype.TaskRef{ID: t.ID, State: apitype.TaskState(t.State)}
}
