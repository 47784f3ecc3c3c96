package dashboard

import (
	"net/http"
	"net/url"

	"reasonix/runner"
	"reasonix/runner/store"
	"reasonix/runner/webhook"
)

func (d *Dashboard) schedulesPage(w http.ResponseWriter, r *http.Request, s *session) {
	list, err := d.svc.Schedules(r.Context())
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "schedules", s, map[string]any{"Schedules": list,
		"MayManage": s.principal.MayManageSchedules() == nil})
}

// scheduleAction pauses, resumes or runs a schedule through the service,
// which checks the principal's role as for the API.
func (d *Dashboard) scheduleAction(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	var err error
	switch r.PathValue("action") {
	case "pause":
		_, err = d.svc.PauseSchedule(r.Context(), s.principal, name)
	case "resume":
		_, err = d.svc.ResumeSchedule(r.Context(), s.principal, name)
	case "run":
		task, rerr := d.svc.RunSchedule(r.Context(), s.principal, name)
		if rerr == nil {
			http.Redirect(w, r, "/tasks/"+url.PathEscape(task.ID), http.StatusSeeOther)
			return
		}
		err = rerr
	default:
		d.problem(w, r, s, http.StatusNotFound, "There is no such schedule action.")
		return
	}
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/schedules", http.StatusSeeOther)
}

// stateCount is how many tasks are in one unfinished state, across nodes.
type stateCount struct {
	State store.State
	Label string
	N     int
}

// nodesPage lists the nodes with the tasks each runs, and how many tasks
// run, wait for a decision or are queued across all of them. A task
// waiting for approval holds no worker (its job sleeps until the decision
// wakes it), so it is on no node's running list; the page counts it on
// its own rather than leave it unseen or count it as running.
func (d *Dashboard) nodesPage(w http.ResponseWriter, r *http.Request, s *session) {
	nodes, err := d.svc.Nodes(r.Context())
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	counts, err := d.st.CountTasks(r.Context())
	if err != nil {
		d.problem(w, r, s, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	work := []stateCount{{State: store.StateRunning, Label: "running"},
		{State: store.StateWaitingApproval, Label: "waiting for approval"}, {State: store.StateQueued, Label: "queued"}}
	for _, c := range counts {
		for i := range work {
			if work[i].State == c.State {
				work[i].N += c.N
			}
		}
	}
	d.render(w, r, http.StatusOK, "nodes", s, map[string]any{"Nodes": nodes, "Self": d.svc.Node(), "Work": work})
}

// webhooksPage shows each configured webhook with its last 20 deliveries:
// accepted, duplicate, ignored or rejected, and why.
func (d *Dashboard) webhooksPage(w http.ResponseWriter, r *http.Request, s *session) {
	var list []webhook.Summary
	if d.hooks != nil {
		var err error
		if list, err = d.hooks.List(r.Context(), 20); err != nil {
			d.fail(w, r, s, err)
			return
		}
	}
	d.render(w, r, http.StatusOK, "webhooks", s, map[string]any{"Webhooks": list})
}

// grantsPage lists the standing grants (Allow always) that stand; a
// principal who may revoke them (grant or admin role) gets the buttons.
func (d *Dashboard) grantsPage(w http.ResponseWriter, r *http.Request, s *session) {
	list, err := d.svc.Grants(r.Context(), runner.GrantFilter{})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "grants", s, map[string]any{"Grants": list,
		"MayRevoke": s.principal.Role.AtLeast(store.RoleGrant)})
}

// revokeGrant ends a standing grant through the service, which checks the
// principal's role as for the API.
func (d *Dashboard) revokeGrant(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := d.svc.RevokeGrant(r.Context(), s.principal, r.PathValue("id")); err != nil {
		d.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/grants", http.StatusSeeOther)
}
