package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

var (
	allStates = []store.State{store.StateQueued, store.StateRunning, store.StateWaitingApproval, store.StateWaitingCI, store.StateSucceeded,
		store.StateFailed, store.StateBlocked, store.StateCancelled, store.StateInterrupted, store.StateBudgetExhausted}
	allSources = []store.Source{store.SourceAPI, store.SourceCLI, store.SourceSlack, store.SourceTelegram,
		store.SourceWebhook, store.SourceCron}
)

// taskRow is one line of the task list.
// Its fields are copied rather than an embedded store.Task: templates
// find promoted fields by a slow reflective search, which dominated the
// rendering of a long list.
type taskRow struct {
	ID, Prompt, Workspace, Requester string
	State                            store.State
	Source                           store.Source
	CreatedAt                        time.Time
	Age                              string
	Duration                         string
	Tokens                           string
	Cost                             string
	Branch                           string
	DiffStat                         string
}

func rowOf(t store.Task, now time.Time) taskRow {
	row := taskRow{ID: t.ID, Prompt: t.Prompt, Workspace: t.Workspace, Requester: t.Requester, State: t.State,
		Source: t.Source, CreatedAt: t.CreatedAt, Age: duration(now.Sub(t.CreatedAt))}
	// The list shows the time from submission to the end (or to now,
	// marked "…"): what a person waited. The task page splits it into
	// running, waiting for approval and queued, which needs the task's
	// state changes; a run's own duration_ms is only its last slice.
	switch {
	case !t.FinishedAt.IsZero():
		row.Duration = apitype.Short(t.FinishedAt.Sub(t.CreatedAt))
	case !terminal(t.State):
		row.Duration = apitype.Short(now.Sub(t.CreatedAt)) + "…"
	}
	if res := t.Result; res != nil {
		if n := res.Tokens.Prompt + res.Tokens.Completion; n > 0 {
			row.Tokens = compact(n)
		}
		switch {
		case res.UnpricedTokens > 0 && res.Cost == 0:
			row.Cost = "unpriced"
		case res.Cost > 0 && !res.CostComplete:
			row.Cost = "≥" + usd(res.Cost)
		case res.Cost > 0:
			row.Cost = usd(res.Cost)
		}
		row.Branch, row.DiffStat = res.Branch, lastLine(res.DiffStat)
	}
	return row
}

// lastLine is a diff stat's summary line ("3 files changed, ...").
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// maxRows bounds a task list page: a row weighs about 0.6 KB, so the
// largest page stays under 150 KB for an approver on a phone connection.
const maxRows = 200

// tasksPage lists tasks newest first, filtered by the query: state, source,
// workspace, requester, q (a substring of the prompt), limit (1 to
// maxRows, default 50) and cursor. Unknown
// filter values are ignored rather than refused: the form offers only
// valid ones, and a stale shared link should still show something.
func (d *Dashboard) tasksPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	var f store.TaskFilter
	for _, st := range allStates {
		if q.Get("state") == string(st) {
			f.States = []store.State{st}
		}
	}
	for _, src := range allSources {
		if q.Get("source") == string(src) {
			f.Source = src
		}
	}
	f.Workspace, f.Requester = limit(q.Get("workspace"), 200), limit(q.Get("requester"), 200)
	f.Search = limit(strings.TrimSpace(q.Get("q")), 200)
	if c := q.Get("cursor"); len(c) <= 64 {
		f.Cursor = c
	}
	f.Limit = 50
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n >= 1 && n <= maxRows {
		f.Limit = n
	}
	page, err := d.svc.Tasks(r.Context(), f)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	now := time.Now()
	rows := make([]taskRow, len(page.Tasks))
	for i, t := range page.Tasks {
		rows[i] = rowOf(t, now)
	}
	// Both pager links keep the filters: "Newest" is the first page of
	// the same list, not of all tasks.
	nq := url.Values{}
	for k, v := range q {
		if k != "cursor" {
			nq[k] = v
		}
	}
	newest := "/"
	if len(nq) > 0 {
		newest = "/?" + nq.Encode()
	}
	next := ""
	if page.Next != "" {
		nq.Set("cursor", page.Next)
		next = "/?" + nq.Encode()
	}
	state := ""
	if len(f.States) == 1 {
		state = string(f.States[0])
	}
	d.render(w, r, http.StatusOK, "tasks", s, map[string]any{
		"Rows": rows, "Next": next, "Newest": newest, "States": allStates, "Sources": allSources, "First": f.Cursor == "",
		"State": state, "Source": string(f.Source), "Workspace": f.Workspace, "Requester": f.Requester, "Q": f.Search,
	})
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
