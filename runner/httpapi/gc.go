package httpapi

import (
	"net/http"

	"reasonix/runner/apitype"
)

// gc answers POST /api/v1/gc {dry_run} with what garbage collection on
// this node removed (or would) and kept; an admin token is needed.
func (a *API) gc(w http.ResponseWriter, r *http.Request) {
	var req apitype.GCRequest
	if !decode(w, r, &req) {
		return
	}
	rep, err := a.svc.GC(r.Context(), principalOf(r), req.DryRun)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
