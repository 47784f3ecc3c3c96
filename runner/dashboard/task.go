package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"reasonix/goals"
	"reasonix/runner"
	"reasonix/runner/store"
)

// maxPageEvents is how many events a task page shows at once; a link pages
// on to the next ones.
const maxPageEvents = 500

// maxStoryEvents bounds the events read for a task page's header, plan and
// fleet (the whole task's, not one page's): a task with more shows what
// its first maxStoryEvents say.
const maxStoryEvents = 20000

// taskTabs are the task page's views: the story (default), the diff and
// the raw event log.
var taskTabs = map[string]bool{"story": true, "diff": true, "events": true}

func (d *Dashboard) taskPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	t, err := d.svc.Task(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	tab := r.URL.Query().Get("tab")
	if !taskTabs[tab] {
		tab = "story"
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	after = max(after, 0)
	all, err := d.allEvents(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	// This page's window of the log: maxPageEvents after `after`.
	lo, _ := slices.BinarySearchFunc(all, after+1, func(e store.Event, seq int64) int { return cmp.Compare(e.Seq, seq) })
	evs := all[lo:]
	more := int64(0)
	if len(evs) > maxPageEvents {
		evs = evs[:maxPageEvents]
		more = evs[len(evs)-1].Seq
	}
	last := after
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	aps, err := d.taskApprovals(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	data := map[string]any{
		"Task": t, "Row": rowOf(t, time.Now()), "Last": last, "More": more, "Tab": tab, "CSRF": s.csrf,
		"Head": headerOf(t, all, time.Now()), "EventCount": len(all), "Files": filesOf(resultStat(t)),
		"MayControl": s.principal.MayControl(t) == nil, "Terminal": terminal(t.State), "PR": prOf(t, all),
	}
	switch tab {
	case "story":
		data["Turns"], data["Plan"], data["Fleets"] = conversation(evs), planOf(all), fleetsOf(all)
		data["Deliverables"] = deliverablesOf(t, all)
		data["Delegation"] = delegationOf(t)
		data["Instructions"] = instructionsOf(all)
		data["Approvals"] = d.approvalViews(r.Context(), aps, s.principal)
	case "diff":
		var previews []string
		for _, a := range aps {
			if strings.HasPrefix(a.Preview, "---") || strings.Contains(a.Preview, "\n@@") {
				previews = append(previews, a.Preview)
			}
		}
		data["Previews"] = previews
		// The whole diff comes from the node holding the task's branch;
		// elsewhere (or for a scratch task) the tab says why it has only
		// the previews, rather than looking as if nothing changed.
		diff, truncated, err := d.svc.Diff(r.Context(), id)
		var re *runner.Error
		switch {
		case errors.As(err, &re) && (errors.Is(re.Kind, runner.ErrNotFound) || errors.Is(re.Kind, runner.ErrInvalid)):
			data["DiffNote"] = re.Message + "."
		case err != nil:
			data["DiffNote"] = d.logRef(r, err)
		}
		data["Diff"], data["DiffTruncated"] = string(diff), truncated
	case "events":
		items := make([]eventItem, 0, len(evs))
		for _, e := range evs {
			if e.Type != "plan_updated" && e.Type != string(goals.EventFleetUpdated) {
				items = append(items, itemOf(e))
			}
		}
		data["Items"] = items
	}
	d.render(w, r, http.StatusOK, "task", s, data)
}

// allEvents reads the task's log from the start, at most maxStoryEvents.
func (d *Dashboard) allEvents(ctx context.Context, id string) ([]store.Event, error) {
	const batch = 2000
	var all []store.Event
	for after := int64(0); len(all) < maxStoryEvents; {
		evs, err := d.svc.Events(ctx, id, after, batch)
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
		if len(evs) < batch {
			break
		}
		after = evs[len(evs)-1].Seq
	}
	return all, nil
}

func resultStat(t store.Task) string {
	if t.Result == nil {
		return ""
	}
	return t.Result.DiffStat
}

// taskApprovals is what a task page lists: every pending approval of the
// task first — the one a visitor came to decide must be there however many
// came before it — then up to taskDecisionsShown of its others, oldest
// first.
func (d *Dashboard) taskApprovals(ctx context.Context, id string) ([]store.Approval, error) {
	pending, err := d.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending, Limit: 1000})
	if err != nil {
		return nil, err
	}
	all, err := d.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, Limit: taskDecisionsShown + len(pending)})
	if err != nil {
		return nil, err
	}
	for _, a := range all {
		if a.State != store.ApprovalPending {
			pending = append(pending, a)
		}
	}
	return pending, nil
}

// taskDecisionsShown bounds the decided approvals on a task page.
const taskDecisionsShown = 200

func terminal(s store.State) bool {
	switch s {
	case store.StateQueued, store.StateRunning, store.StateWaitingApproval, store.StateWaitingCI:
		return false
	}
	return true
}

// live streams the task's events after ?after=N as server-sent events, each
// a JSON object with the event's rendered HTML (the page's own template,
// so escaped the same way) and, for a state change, the new state.
// With steps=0 it sends only the state, plan and fleet: a page that is not
// the task's last (its later steps are on the next page) must not grow by
// every later step, the replayed ones at once.
func (d *Dashboard) live(w http.ResponseWriter, r *http.Request, s *session) {
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil || after < 0 {
		after = 0
	}
	steps := r.URL.Query().Get("steps") != "0"
	story := r.URL.Query().Get("view") != "events"
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n >= 0 {
			after = n
		}
	}
	release, ok := d.streams.acquire(s.principal.ID)
	if !ok {
		w.Header().Set("Retry-After", "5")
		d.problem(w, r, s, http.StatusTooManyRequests, fmt.Sprintf("You have %d live pages open already; close some.", MaxStreamsPerPrincipal))
		return
	}
	defer release()
	ctx := r.Context()
	events, err := d.svc.Subscribe(ctx, r.PathValue("id"), after)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the server's WriteTimeout would cut the stream
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	keep := time.NewTicker(d.keepAlive)
	defer keep.Stop()
	// When the session ends the stream ends; the page's next request then
	// has to sign in again.
	ended := time.NewTimer(time.Until(s.expires))
	defer ended.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ended.C:
			return
		case <-keep.C:
			// A session signed out (in another tab) or whose token was
			// revoked ends its streams too, within a keep-alive: the
			// check at connect alone would let an open tab go on showing
			// the task's steps for as long as it stays open. A store that
			// cannot answer just now is asked again at the next tick.
			if _, err := d.st.WebSessionBySecret(ctx, s.secret); errors.Is(err, store.ErrNotFound) {
				return
			}
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case ev, ok := <-events:
			if !ok {
				return
			}
			data, err := d.liveEvent(ev, steps, story)
			if data == nil && err == nil {
				continue
			}
			if err != nil {
				d.log.Warn("dashboard: render live event", "task", ev.TaskID, "seq", ev.Seq, "err", err)
				continue
			}
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Seq, data); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// liveEvent is ev as the stream sends it; nil when steps is false and ev
// is a step, which the page does not show. For the story view (story
// true) a step comes as its line of the conversation: the line's HTML,
// its element id when it replaces an earlier line (a call's end replaces
// its start), and the HTML of its turn for a page that lacks it.
func (d *Dashboard) liveEvent(ev store.Event, steps, story bool) ([]byte, error) {
	var buf bytes.Buffer
	msg := map[string]any{"seq": ev.Seq, "type": ev.Type}
	if ev.Type == "ci_updated" {
		// The pull request's checks, wherever the page is: a task waiting
		// for CI changes nothing else while they run.
		if err := d.eventTmpl.ExecuteTemplate(&buf, "pr", prFromEvent(ev)); err != nil {
			return nil, err
		}
		msg["pr"] = buf.String()
	} else if s, ok := fleetOf(ev); ok {
		if err := d.eventTmpl.ExecuteTemplate(&buf, "fleet", layoutFleet(s)); err != nil {
			return nil, err
		}
		msg["fleet"], msg["fleet_id"] = buf.String(), domID(s.FleetID)
	} else if ev.Type == "plan_updated" {
		if err := d.eventTmpl.ExecuteTemplate(&buf, "plan", planOf([]store.Event{ev})); err != nil {
			return nil, err
		}
		msg["plan"] = buf.String()
	} else if steps && story {
		var (
			t     turn
			items []storyItem
		)
		p, ok := stepOf(ev)
		if ok {
			t, ok = turnOf(ev, p)
			items = itemsOf(ev, p)
		}
		if !ok || len(items) == 0 {
			if ev.Type != "task_state" {
				return nil, nil
			}
		} else {
			// A line without a turn of its own ("" key) goes in the page's
			// latest turn, or in this one when the page has none.
			msg["turn_id"] = t.Key
			if t.Key == "" {
				t.Key = "t-along"
			}
			if err := d.eventTmpl.ExecuteTemplate(&buf, "turn", t); err != nil {
				return nil, err
			}
			msg["turn"] = buf.String()
			buf.Reset()
			if err := d.eventTmpl.ExecuteTemplate(&buf, "item", items[0]); err != nil {
				return nil, err
			}
			msg["item"], msg["item_id"] = buf.String(), items[0].ID
		}
	} else if steps {
		if err := d.eventTmpl.ExecuteTemplate(&buf, "event", itemOf(ev)); err != nil {
			return nil, err
		}
		msg["html"] = buf.String()
	} else if ev.Type != "task_state" {
		return nil, nil
	}
	if ev.Type == "task_state" {
		msg["state"] = stateOf(ev)
	}
	return json.Marshal(msg)
}

// control runs one of the requester's (or an admin's) task actions after
// the same check the API makes.
func (d *Dashboard) control(w http.ResponseWriter, r *http.Request, s *session, act func(id string) error) {
	id := r.PathValue("id")
	t, err := d.svc.Task(r.Context(), id)
	if err == nil {
		err = s.principal.MayControl(t)
	}
	if err == nil {
		err = act(id)
	}
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/tasks/"+id, http.StatusSeeOther)
}

func (d *Dashboard) cancel(w http.ResponseWriter, r *http.Request, s *session) {
	d.control(w, r, s, func(id string) error { _, err := d.svc.Cancel(r.Context(), id); return err })
}

func (d *Dashboard) resume(w http.ResponseWriter, r *http.Request, s *session) {
	d.control(w, r, s, func(id string) error { _, err := d.svc.Resume(r.Context(), id); return err })
}

func (d *Dashboard) message(w http.ResponseWriter, r *http.Request, s *session) {
	d.control(w, r, s, func(id string) error {
		_, err := d.svc.Message(r.Context(), id, s.principal, r.PostFormValue("text"))
		return err
	})
}
