package dashboard

import (
	"net/http"
	"net/url"

	"reasonix/runner"
	"reasonix/runner/store"
)

// memoryView is a memory with what the viewer may do about it.
type memoryView struct {
	store.Memory
	// MayForget: runner.Principal.MayForgetMemory, the rule the API's
	// DELETE /api/v1/memories/{id} applies, lets the viewer forget it.
	MayForget bool
}

// memoriesPage lists the memories the principal may see (the service's
// Memories applies runner.Principal.MaySeeMemory, as GET
// /api/v1/memories does), newest first: ?scope= narrows to one scope and
// ?all=1 adds the forgotten ones. Forget buttons are shown only where
// the service would let the viewer forget; it checks again on the post.
func (d *Dashboard) memoriesPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	scope, all := q.Get("scope"), q.Get("all") == "1"
	list, err := d.svc.Memories(r.Context(), s.principal, runner.MemoryFilter{Scope: scope, All: all})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	views := make([]memoryView, len(list))
	for i, m := range list {
		views[i] = memoryView{Memory: m, MayForget: m.Live() && s.principal.MayForgetMemory(m) == nil}
	}
	d.render(w, r, http.StatusOK, "memories", s, map[string]any{"Memories": views, "Scope": scope, "All": all})
}

// forgetMemory forgets a memory through runner.Service.ForgetMemory, the
// door the API and the CLI use, which checks the principal's authority.
func (d *Dashboard) forgetMemory(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := d.svc.ForgetMemory(r.Context(), s.principal, r.PathValue("id")); err != nil {
		d.fail(w, r, s, err)
		return
	}
	back := "/memories"
	if sc := r.PostFormValue("scope"); sc != "" {
		back += "?scope=" + url.QueryEscape(sc)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
