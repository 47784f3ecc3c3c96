package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"reasonix/runner"
	"reasonix/runner/store"
)

// approvalView is an approval with what the viewer may do about it.
type approvalView struct {
	store.Approval
	Pending bool
	// MayDecide: runner.Service.MayDecide, the rule Decide applies, lets
	// the viewer decide it.
	MayDecide bool
	Why       string // why the viewer may not decide, when they may not
	// Budget is set for a budget card (an approval of tool "budget": the
	// task spent its budget and asks for more): what "+" gives, as the
	// chat's button says it. Its choices are allow_once (+ the same
	// budget), deny (Stop) and stop_publish (Stop and publish what
	// exists), decided through Service.Decide like any approval.
	Budget string
}

func (d *Dashboard) approvalViews(ctx context.Context, list []store.Approval, p runner.Principal) []approvalView {
	out := make([]approvalView, len(list))
	for i, a := range list {
		v := approvalView{Approval: a, Pending: a.State == store.ApprovalPending}
		if a.Tool == budgetTool {
			v.Budget = cmp.Or(d.svc.BudgetOffer(ctx, a), "the same budget")
		}
		var re *runner.Error
		switch err := d.svc.MayDecide(ctx, p, a); {
		case err == nil:
			v.MayDecide = true
		case errors.As(err, &re) && errors.Is(re.Kind, runner.ErrForbidden):
			v.Why = re.Message
		default:
			v.Why = "it could not be checked whether you may decide this"
		}
		out[i] = v
	}
	return out
}

// budgetTool is the tool name of a budget card's approval record.
const budgetTool = "budget"

// boolInt orders false before true.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// approvalsPage shows pending approvals first (soonest deadline first),
// then the most recent decisions.
func (d *Dashboard) approvalsPage(w http.ResponseWriter, r *http.Request, s *session) {
	pending, err := d.svc.Approvals(r.Context(), runner.ApprovalFilter{State: store.ApprovalPending, Limit: 500})
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	slices.SortStableFunc(pending, func(a, b store.Approval) int {
		// One without a deadline can wait longest: after every deadline.
		if a.NoDeadline() || b.NoDeadline() {
			return cmp.Compare(boolInt(a.NoDeadline()), boolInt(b.NoDeadline()))
		}
		return a.ExpiresAt.Compare(b.ExpiresAt)
	})
	// The latest decisions, asked of the store newest first: the service's
	// list runs oldest first and is capped, so past the cap it would show
	// old decisions and never the new ones.
	decided, err := d.st.RecentDecisions(r.Context(), 50)
	if err != nil {
		d.problem(w, r, s, http.StatusInternalServerError, d.logRef(r, err))
		return
	}
	d.render(w, r, http.StatusOK, "approvals", s, map[string]any{
		"Pending": d.approvalViews(r.Context(), pending, s.principal), "Decided": d.approvalViews(r.Context(), decided, s.principal),
		"Now": time.Now(),
	})
}

// pendingJSON is GET /approvals/count: {"pending": n}, what every page's
// navigation polls to keep its count (and the title's) current without
// reloading the page.
func (d *Dashboard) pendingJSON(w http.ResponseWriter, r *http.Request, s *session) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	fmt.Fprintf(w, `{"pending":%d}`+"\n", d.pendingCount(r.Context()))
}

// decide records a decision through runner.Service.Decide, exactly as the
// API's POST /api/v1/approvals/{id}: the decider is the session's
// principal with its role, bound to the call hash the page showed.
func (d *Dashboard) decide(w http.ResponseWriter, r *http.Request, s *session) {
	p := s.principal
	a, err := d.svc.Decide(r.Context(), runner.Decision{ApprovalID: r.PathValue("id"),
		Decision: r.PostFormValue("decision"), Approver: p.ID, Role: p.Role, Note: r.PostFormValue("note"),
		Scope: r.PostFormValue("scope"), CallHash: r.PostFormValue("call_hash"), GrantFor: r.PostFormValue("grant_for")})
	var re *runner.Error
	if errors.As(err, &re) && errors.Is(re.Kind, runner.ErrForbidden) {
		d.problem(w, r, s, http.StatusForbidden, capitalized(re.Message)+". Nothing changed.")
		return
	}
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

// capitalized is s with its first letter upper-case.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
