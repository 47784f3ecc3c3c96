package dashboard

import (
	"net/http"
	"net/url"

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

func (d *Dashboard) nodesPage(w http.ResponseWriter, r *http.Request, s *session) {
	nodes, err := d.svc.Nodes(r.Context())
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "nodes", s, map[string]any{"Nodes": nodes, "Self": d.svc.Node()})
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
