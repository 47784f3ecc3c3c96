package httpapi

import (
	"net/http"
	"time"

	"reasonix/runner/apitype"
)

// gc answers POST /api/v1/gc {dry_run} with what garbage collection on
// this node removed (or would) and kept; an admin token is needed.
func (a *API) gc(w http.ResponseWriter, r *http.Request) {
	var req apitype.GCRequest
	if !decode(w, r, &req) {
		return
	}
	// A first prune of a long history outlasts the server's WriteTimeout;
	// the caller's context (its disconnect) still bounds the work.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	rep, err := a.svc.GC(r.Context(), principalOf(r), req.DryRun)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
