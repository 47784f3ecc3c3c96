package httpapi

import (
	"net/http"

	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

func viewMemory(m store.Memory) apitype.Memory {
	return apitype.Memory{ID: m.ID, Scope: m.Scope.String(), Text: m.Text, By: m.By, TaskID: m.TaskID,
		CreatedAt: m.CreatedAt, ForgottenAt: optTime(m.ForgottenAt), ForgottenBy: m.ForgottenBy}
}

func (a *API) listMemories(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runner.MemoryFilter{Scope: q.Get("scope")}
	var ok bool
	if f.All, ok = boolParam(w, r, "all"); !ok {
		return
	}
	if f.Limit, ok = intParam(w, r, "limit", 1, 0, 0); !ok {
		return
	}
	list, err := a.svc.Memories(r.Context(), principalOf(r), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]apitype.Memory, len(list))
	for i, m := range list {
		views[i] = viewMemory(m)
	}
	writeJSON(w, http.StatusOK, apitype.MemoryList{Memories: views})
}

func (a *API) getMemory(w http.ResponseWriter, r *http.Request) {
	m, err := a.svc.Memory(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewMemory(m))
}

func (a *API) forgetMemory(w http.ResponseWriter, r *http.Request) {
	m, err := a.svc.ForgetMemory(r.Context(), principalOf(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewMemory(m))
}
