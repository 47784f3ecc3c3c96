package dashboard

import (
	"net/http"
	"slices"
	"time"

	"reasonix/runner"
	"reasonix/runner/store"
)

// approvalView is an approval with what the viewer may do about it.
type approvalView struct {
	store.Approval
	Pending bool
	// MayDecide: the viewer's role decides approvals and the task is not
	// the viewer's own (unless the viewer is an admin). Decide checks it
	// again, with the approver list and self-approval setting.
	MayDecide bool
	Why       string // why the viewer may not decide, when they may not
}

func approvalViews(list []store.Approval, p runner.Principal) []approvalView {
	out := make([]approvalView, len(list))
	for i, a := range list {
		v := approvalView{Approval: a, Pending: a.State == store.ApprovalPending}
		switch err := p.MayDecide(); {
		case err != nil:
			v.Why = "your role (" + string(p.Role) + ") may not decide approvals"
		case a.Requester == p.ID && p.Role != store.RoleAdmin:
			v.Why = "you requested this task; another approver must decide"
		case len(a.Approvers) > 0 && !slices.Contains(a.Approvers, p.ID) && p.Role != store.RoleAdmin:
			v.Why = "this task names its approvers, and you are not one"
		default:
			v.MayDecide = true
		}
		out[i] = v
	}
	return out
}

// approvalsPage shows pending approvals first (soonest deadline first),
// then the most recent decisions.
func (d *Dashboard) approvalsPage(w http.ResponseWriter, r *http.Request, s *session) {
	pending, err := d.svc.Approvals(r.Context(), runner.ApprovalFilter{State: store.ApprovalPending, Limit: 500})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	slices.SortStableFunc(pending, func(a, b store.Approval) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	// The latest decisions, asked of the store newest first: the service's
	// list runs oldest first and is capped, so past the cap it would show
	// old decisions and never the new ones.
	decided, err := d.st.RecentDecisions(r.Context(), 50)
	if err != nil {
		d.problem(w, r, s, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.render(w, r, http.StatusOK, "approvals", s, map[string]any{
		"Pending": approvalViews(pending, s.principal), "Decided": approvalViews(decided, s.principal),
		"Now": time.Now(),
	})
}

// decide records a decision through runner.Service.Decide, exactly as the
// API's POST /api/v1/approvals/{id}: the decider is the session's
// principal with its role, bound to the call hash the page showed.
func (d *Dashboard) decide(w http.ResponseWriter, r *http.Request, s *session) {
	p := s.principal
	a, err := d.svc.Decide(r.Context(), runner.Decision{ApprovalID: r.PathValue("id"),
		Decision: r.PostFormValue("decision"), Approver: p.ID, Role: p.Role, Note: r.PostFormValue("note"),
		Scope: r.PostFormValue("scope"), CallHash: r.PostFormValue("call_hash")})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	back := "/approvals"
	if r.PostFormValue("back") == "task" {
		back = "/tasks/" + a.TaskID
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
