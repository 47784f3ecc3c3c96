package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"reasonix/runner"
	"reasonix/runner/apitype"
)

type principalKey struct{}

// auth authenticates the bearer token to its principal, which the handlers
// read with principalOf: who asks and who decides come from the
// credential, never from the request body.
func (a *API) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		secret = strings.TrimSpace(secret)
		if !ok || secret == "" {
			unauthorized(w)
			return
		}
		p, err := a.svc.Authenticate(r.Context(), secret)
		if errors.Is(err, runner.ErrUnauthenticated) {
			unauthorized(w)
			return
		}
		if err != nil {
			a.fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="reasonix"`)
	writeError(w, http.StatusUnauthorized, apitype.CodeUnauthorized, "a valid bearer token is required")
}

// principalOf is the principal auth established for r; the zero Principal
// (no role, allowed nothing) outside /api/v1.
func principalOf(r *http.Request) runner.Principal {
	p, _ := r.Context().Value(principalKey{}).(runner.Principal)
	return p
}

// ownTask answers 403 (or 404) unless the caller may change task id: its
// requester or an admin.
func (a *API) ownTask(w http.ResponseWriter, r *http.Request, id string) bool {
	t, err := a.svc.Task(r.Context(), id)
	if err == nil {
		err = principalOf(r).MayControl(t)
	}
	if err != nil {
		a.fail(w, r, err)
		return false
	}
	return true
}

// refuseClaimedIdentity answers 400 when a body names who is asking or
// deciding: that comes from the token now, and silently ignoring the field
// would let a client believe it was recorded.
func refuseClaimedIdentity(w http.ResponseWriter, r *http.Request, field string, present bool) bool {
	if !present {
		return false
	}
	writeError(w, http.StatusBadRequest, apitype.CodeInvalid, "the "+field+" field is not accepted: the "+field+
		" is the principal of the bearer token ("+principalOf(r).ID+")")
	return true
}
