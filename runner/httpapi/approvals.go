package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"reasonix/runner"
	"reasonix/runner/store"
)

// approvalView is an approval as the API shows it.
type approvalView struct {
	ID        string              `json:"id"`
	TaskID    string              `json:"task_id"`
	Tool      string              `json:"tool"`
	Subject   string              `json:"subject"`
	CallHash  string              `json:"call_hash"`
	Preview   string              `json:"preview"`
	Requester string              `json:"requester"`
	Approvers []string            `json:"approvers"`
	Scopes    []string            `json:"scopes"`
	State     store.ApprovalState `json:"state"`
	Decision  store.Decision      `json:"decision,omitempty"`
	DecidedBy string              `json:"decided_by,omitempty"`
	Scope     string              `json:"scope,omitempty"`
	Note      string              `json:"note,omitempty"`
	CreatedAt time.Time           `json:"created_at"`
	ExpiresAt time.Time           `json:"expires_at"`
	DecidedAt *time.Time          `json:"decided_at,omitempty"`

	// Instructors sent the task messages before the call: they may not
	// decide it (see runner.Service.MayDecide).
	Instructors []string `json:"instructors"`
}

func viewApproval(a store.Approval) approvalView {
	v := approvalView{ID: a.ID, TaskID: a.TaskID, Tool: a.Tool, Subject: a.Subject, CallHash: a.CallHash,
		Preview: a.Preview, Requester: a.Requester, Approvers: a.Approvers, Scopes: a.Scopes, State: a.State,
		Decision: a.Decision, DecidedBy: a.DecidedBy, Scope: a.Scope, Note: a.Note,
		CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt}
	if !a.DecidedAt.IsZero() {
		v.DecidedAt = &a.DecidedAt
	}
	if v.Approvers == nil {
		v.Approvers = []string{}
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	if v.Instructors = a.Instructors; v.Instructors == nil {
		v.Instructors = []string{}
	}
	return v
}

func (a *API) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runner.ApprovalFilter{State: store.ApprovalState(q.Get("state")), TaskID: q.Get("task")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid", "limit must be 1..1000")
			return
		}
		f.Limit = n
	}
	list, err := a.svc.Approvals(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]approvalView, len(list))
	for i, ap := range list {
		views[i] = viewApproval(ap)
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": views})
}

// decideRequest is the body of POST /api/v1/approvals/{id}.
type decideRequest struct {
	Decision string `json:"decision"` // allow_once | allow_task | deny
	// Approver is refused: the decider is the token's principal.
	Approver *string `json:"approver"`
	Note     string  `json:"note"`
	Scope    string  `json:"scope"`
	CallHash string  `json:"call_hash"`
}

func (a *API) decide(w http.ResponseWriter, r *http.Request) {
	var body decideRequest
	if !decode(w, r, &body) || refuseClaimedIdentity(w, r, "approver", body.Approver != nil) {
		return
	}
	p := principalOf(r)
	ap, err := a.svc.Decide(r.Context(), runner.Decision{ApprovalID: r.PathValue("id"), Decision: body.Decision,
		Approver: p.ID, Role: p.Role, Note: body.Note, Scope: body.Scope, CallHash: body.CallHash})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewApproval(ap))
}
