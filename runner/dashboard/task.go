package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"reasonix/goals"
	"reasonix/runner"
	"reasonix/runner/store"
)

// maxPageEvents is how many events a task page shows at once; a link pages
// on to the next ones.
const maxPageEvents = 500

func (d *Dashboard) taskPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	t, err := d.svc.Task(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	evs, err := d.svc.Events(r.Context(), id, max(after, 0), maxPageEvents+1)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	more := int64(0)
	if len(evs) > maxPageEvents {
		evs = evs[:maxPageEvents]
		more = evs[len(evs)-1].Seq
	}
	items := make([]eventItem, 0, len(evs))
	for _, e := range evs {
		if e.Type != "plan_updated" && e.Type != string(goals.EventFleetUpdated) {
			items = append(items, itemOf(e))
		}
	}
	last := max(after, 0)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	aps, err := d.taskApprovals(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	d.render(w, r, http.StatusOK, "task", s, map[string]any{
		"Task": t, "Row": rowOf(t, time.Now()), "Items": items, "Plan": planOf(evs), "Fleets": fleetsOf(evs), "Last": last, "More": more,
		"Approvals": d.approvalViews(r.Context(), aps, s.principal), "MayControl": s.principal.MayControl(t) == nil,
		"Terminal": terminal(t.State),
	})
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
	case store.StateQueued, store.StateRunning, store.StateWaitingApproval:
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
			data, err := d.liveEvent(ev, steps)
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
// is a step, which the page does not show.
func (d *Dashboard) liveEvent(ev store.Event, steps bool) ([]byte, error) {
	var buf bytes.Buffer
	msg := map[string]any{"seq": ev.Seq, "type": ev.Type}
	if s, ok := fleetOf(ev); ok {
		if err := d.eventTmpl.ExecuteTemplate(&buf, "fleet", layoutFleet(s)); err != nil {
			return nil, err
		}
		msg["fleet"], msg["fleet_id"] = buf.String(), domID(s.FleetID)
	} else if ev.Type == "plan_updated" {
		if err := d.eventTmpl.ExecuteTemplate(&buf, "plan", planOf([]store.Event{ev})); err != nil {
			return nil, err
		}
		msg["plan"] = buf.String()
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
