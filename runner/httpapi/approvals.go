package httpapi

import (
	"net/http"

	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

func (a *API) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runner.ApprovalFilter{State: store.ApprovalState(q.Get("state")), TaskID: q.Get("task")}
	var ok bool
	if f.Limit, ok = intParam(w, r, "limit", 1, 1000, 0); !ok {
		return
	}
	list, err := a.svc.Approvals(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]apitype.Approval, len(list))
	for i, ap := range list {
		views[i] = viewApproval(ap)
	}
	writeJSON(w, http.StatusOK, apitype.ApprovalList{Approvals: views})
}

// decideRequest is the body of POST /api/v1/approvals/{id} as it may
// arrive.
type decideRequest struct {
	apitype.DecideRequest
	// Approver is refused: the decider is the token's principal.
	Approver *string `json:"approver"`
}

func (a *API) decide(w http.ResponseWriter, r *http.Request) {
	var body decideRequest
	if !decode(w, r, &body) || refuseClaimedIdentity(w, r, "approver", body.Approver != nil) {
		return
	}
	p := principalOf(r)
	d := runner.Decision{ApprovalID: r.PathValue("id"), Decision: string(body.Decision),
		Approver: p.ID, Role: p.Role, Note: body.Note, Scope: body.Scope, CallHash: body.CallHash, GrantFor: body.GrantFor}
	if body.ExpiresAt != nil {
		d.GrantExpires = *body.ExpiresAt
	}
	ap, err := a.svc.Decide(r.Context(), d)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewApproval(ap))
}

func (a *API) listGrants(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runner.GrantFilter{For: q.Get("grant_for"), Name: q.Get("name")}
	var ok bool
	if f.All, ok = boolParam(w, r, "all"); !ok {
		return
	}
	list, err := a.svc.Grants(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]apitype.Grant, len(list))
	for i, g := range list {
		views[i] = viewGrant(g)
	}
	writeJSON(w, http.StatusOK, apitype.GrantList{Grants: views})
}

func (a *API) revokeGrant(w http.ResponseWriter, r *http.Request) {
	g, err := a.svc.RevokeGrant(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewGrant(g))
}
