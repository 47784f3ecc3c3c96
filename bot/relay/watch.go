package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// watch starts relaying task taskID to target unless it is relayed
// already. It is a no-op before Start and after Stop.
func (r *Relay) watch(taskID string, target runner.NotifyTarget) {
	t, ok := r.transports[target.Transport]
	if !ok {
		return
	}
	r.mu.Lock()
	if r.ctx == nil || r.ctx.Err() != nil || r.watching[taskID] {
		r.mu.Unlock()
		return
	}
	r.watching[taskID] = true
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		w := &watcher{r: r, t: t, target: target, v: view{taskID: taskID, link: r.taskURL(taskID)}}
		err := r.leased(taskID, w.run)
		r.mu.Lock()
		delete(r.watching, taskID)
		r.mu.Unlock()
		if errors.Is(err, bot.ErrLeaseHeld) {
			return // another node relays it; the scan looks again later
		}
		if err != nil {
			if r.ctx.Err() == nil {
				r.log.Warn("relay: relaying a task stopped", "task", taskID, "err", err)
			}
			return
		}
		// The task may have been continued while this watcher was
		// finishing (a reply, whose own watch found this one still
		// running): anything logged after what it saw needs a watcher.
		if r.ctx.Err() == nil {
			if evs, err := r.svc.Events(r.ctx, taskID, w.seen, 1); err == nil && len(evs) > 0 {
				r.watch(taskID, target)
			}
		}
	}()
}

func (r *Relay) isWatching(taskID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watching[taskID]
}

// watcher relays one task: it replays the task's log from the start (a
// restarted relay re-renders; posts it made already are found by their
// keys and not repeated) and follows it until the task ends.
type watcher struct {
	r      *Relay
	t      bot.Transport
	target runner.NotifyTarget
	v      view
	status string // the status message's id
	shown  string // what the status message shows now
	// fleet summaries by node id, for sub-agent reports.
	summaries map[string]string
	seen      int64 // the last event applied
	// posts counts the task's thread messages under the per-task cap
	// (everything but the status message and approvals), restored from
	// the store after a restart.
	posts int
	// deferred is true while the status message is held back: where the
	// platform shows "typing…" (bot.Typer), a task that answers within
	// StatusDelay needs no status message at all — its answer comes at
	// once instead of a paced second behind one.
	deferred bool
	// reminders are the pending approvals still to be reminded of, by id:
	// when (see remind.go).
	reminders map[string]time.Time
	// urgent puts the status edit in the pacer's urgent lane: the edit
	// that announces an approval request, just before it.
	urgent bool
	// lastEvent is when the task last logged anything; stalled is the
	// event after which a stall was said (see stall.go).
	lastEvent time.Time
	stalled   int64
}

func (w *watcher) key() string { return w.t.Name() + "/" + w.target.Channel }

func (w *watcher) run(ctx context.Context) error {
	r := w.r
	task, err := r.svc.Task(ctx, w.v.taskID)
	if err != nil {
		return err
	}
	w.v.prompt, w.v.state, w.v.requester = task.Prompt, task.State, task.Requester
	if !task.StartedAt.IsZero() {
		w.v.started = task.StartedAt
	}
	events, err := r.svc.Subscribe(ctx, task.ID, 0)
	if err != nil {
		return err
	}
	if err := w.ensureParent(ctx, task); err != nil {
		return err
	}
	if err := w.ensureStatus(ctx); err != nil {
		return err
	}
	if w.posts, err = r.st.CountChatPosts(ctx, task.ID, "ev:"); err != nil {
		return err
	}
	var timer *time.Timer
	var due, showAt, typing <-chan time.Time
	if w.deferred {
		show := time.NewTimer(r.cfg.StatusDelay)
		defer show.Stop()
		showAt = show.C
	}
	if typer, ok := w.t.(bot.Typer); ok {
		tick := time.NewTicker(bot.TypingLasts)
		defer tick.Stop()
		typing = tick.C
		w.typing(ctx, typer)
	}
	dirty := false
	var remindTimer *time.Timer
	var remindC <-chan time.Time
	var remindAt time.Time
	defer func() {
		if remindTimer != nil {
			remindTimer.Stop()
		}
	}()
	// The elapsed time moves while nothing else does: refresh it now and
	// then, through the same coalescing as every other change.
	refresh := time.NewTicker(r.cfg.RefreshInterval)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-refresh.C:
			dirty = dirty || (!w.v.started.IsZero() && !w.v.state.Terminal())
			w.checkStall(ctx)
		case <-due:
			due = nil
		case <-showAt:
			showAt = nil
			if err := w.showStatus(ctx); err != nil {
				r.log.Warn("relay: posting the status message", "task", w.v.taskID, "err", err)
			}
		case <-typing:
			w.typing(ctx, w.t.(bot.Typer))
		case <-remindC:
			remindC, remindAt = nil, time.Time{}
			w.remindDue(ctx)
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			w.seen, w.lastEvent = ev.Seq, ev.Time
			was := w.v.state
			if w.v.apply(ev) {
				dirty = true
			}
			if typer, ok := w.t.(bot.Typer); ok && was != runner.StateRunning && w.v.state == runner.StateRunning && ev.Time.After(r.now().Add(-bot.TypingLasts)) {
				w.typing(ctx, typer) // the model starts (again) now, not at the next tick
			}
			held := w.v.held
			w.post(ctx, ev)
			dirty = dirty || w.v.held != held
			if ev.Type == "task_state" && w.v.state.Terminal() && w.ended(ctx, ev.Seq) {
				// The last state always lands, waiting for its slot.
				err := w.editStatus(ctx, true)
				w.conclude(ctx)
				if err == nil {
					w.recordEnd(ctx)
				}
				return err
			}
		}
		if at := w.nextReminder(); !at.IsZero() && !at.After(r.now()) {
			// Due by the relay's clock (Config.Now) though the timer has
			// not fired: the clock is the authority.
			w.remindDue(ctx)
		}
		if at := w.nextReminder(); !at.Equal(remindAt) {
			if remindTimer != nil {
				remindTimer.Stop()
			}
			remindC, remindAt = nil, at
			if !at.IsZero() {
				remindTimer = time.NewTimer(max(at.Sub(r.now()), 0))
				remindC = remindTimer.C
			}
		}
		if w.deferred {
			// Nothing to edit yet: taking the channel's slot would only
			// hold the answer back. showStatus renders the view as it is.
			dirty = false
		}
		if dirty && due == nil {
			if d := r.pace.try(w.key(), interval(w.t, w.target.Channel)); d == 0 {
				if err := w.editStatus(ctx, false); err != nil {
					r.log.Warn("relay: status edit failed", "task", w.v.taskID, "err", err)
				}
				dirty = false
			} else {
				if timer != nil {
					timer.Stop()
				}
				timer = time.NewTimer(d)
				due = timer.C
			}
		}
	}
}

// ended reports whether the terminal state at seq is the task's last
// word: a replayed log holds the end of every earlier run of a continued
// task, and only the end with nothing after it closes the watch.
func (w *watcher) ended(ctx context.Context, seq int64) bool {
	t, err := w.r.svc.Task(ctx, w.v.taskID)
	if err != nil {
		return true
	}
	if !t.State.Terminal() {
		return false
	}
	later, err := w.r.svc.Events(ctx, w.v.taskID, seq, 1)
	return err != nil || len(later) == 0
}

// ensureStatus finds the status message posted before or posts it —
// where the platform shows typing, later (see watcher.deferred).
func (w *watcher) ensureStatus(ctx context.Context) error {
	r := w.r
	if p, err := r.st.ChatPost(ctx, w.v.taskID, "status"); err == nil {
		w.status = p.MessageID
		w.lead(p.MessageID)
		return nil
	} else if !errors.Is(err, runner.ErrRecordNotFound) {
		return err
	}
	if _, ok := w.t.(bot.Typer); ok && w.target.Thread != "" {
		w.deferred = true
		return nil
	}
	return w.postStatus(ctx)
}

// lead makes message id the task's thread when the task has none yet (a
// task from the API naming only a channel): everything after it goes
// under it, not into the channel.
func (w *watcher) lead(id string) {
	if w.target.Thread == "" {
		w.target.Thread = id
	}
}

// ensureParent gives a task a schedule or a webhook started, reported to
// a channel without a thread, one message in the channel saying which
// schedule or webhook started it and why; its status, approvals and
// report go to that message's thread.
func (w *watcher) ensureParent(ctx context.Context, task runner.Task) error {
	if w.target.Thread != "" {
		return nil
	}
	r := w.r
	if p, err := r.st.ChatPost(ctx, w.v.taskID, "parent"); err == nil {
		w.target.Thread = p.MessageID
		return nil
	} else if !errors.Is(err, runner.ErrRecordNotFound) {
		return err
	}
	var first struct {
		Origin map[string]string `json:"origin"`
	}
	if evs, err := r.svc.Events(ctx, task.ID, 0, 1); err == nil && len(evs) > 0 {
		_ = json.Unmarshal(evs[0].Payload, &first)
	}
	text := parentText(w.t.Format(), task, first.Origin, w.v.link)
	if text == "" {
		return nil // the status message leads (see lead)
	}
	id, err := r.post(ctx, w.t, bot.Message{Channel: w.target.Channel, Text: r.redact.String(text)})
	if err != nil {
		return fmt.Errorf("posting the parent message: %w", err)
	}
	w.bind(ctx, id)
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: "parent", Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}); err != nil {
		return err
	}
	w.target.Thread = id
	if p, err := r.st.ChatPost(ctx, w.v.taskID, "parent"); err == nil {
		w.target.Thread = p.MessageID // a racing node's post wins
	}
	return nil
}

// parentText says which schedule or webhook started task, and why; ""
// for a task from anywhere else.
func parentText(f bot.Format, task runner.Task, origin map[string]string, link string) string {
	kind, name, ok := strings.Cut(task.Requester, ":")
	if !ok || name == "" {
		return ""
	}
	var head string
	switch kind {
	case "schedule":
		head = "⏰ " + f.Bold(f.Escape("Schedule "+name)) + f.Escape(" started task "+task.ID)
		if at, err := time.Parse(time.RFC3339, origin["occurrence"]); err == nil {
			head += f.Escape(", its run due " + at.UTC().Format("2006-01-02 15:04 MST"))
		}
	case "webhook":
		head = "🪝 " + f.Bold(f.Escape("Webhook "+name)) + f.Escape(" started task "+task.ID)
		if e := origin["event"]; e != "" {
			article := "a"
			if strings.ContainsRune("aeiouAEIOU", rune(e[0])) {
				article = "an"
			}
			head += f.Escape(" on " + article + " " + e + " event")
		}
		if d := origin["delivery"]; d != "" {
			head += f.Escape(" (delivery " + d + ")")
		}
	default:
		return ""
	}
	text := head + ":\n" + f.Escape(firstLine(task.Prompt, 300)) + "\n" + f.Escape("Its progress, approvals and report follow in this thread.")
	if link != "" {
		text += "\n" + f.Escape(link)
	}
	return text
}

// showStatus posts the held-back status message, unless the task ended:
// its report says it all.
func (w *watcher) showStatus(ctx context.Context) error {
	if !w.deferred || w.v.state.Terminal() {
		return nil
	}
	if err := w.postStatus(ctx); err != nil {
		return err // still held back: the next occasion tries again
	}
	w.deferred = false
	return nil
}

// typing shows the platform's "typing…" while the model works.
func (w *watcher) typing(ctx context.Context, t bot.Typer) {
	if w.v.state != runner.StateRunning {
		return
	}
	// Short: a sluggish platform must not hold the answer back for a
	// nicety.
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := t.Typing(tctx, w.target.Channel); err != nil && ctx.Err() == nil {
		w.r.log.Info("relay: showing typing", "task", w.v.taskID, "err", err)
	}
}

// conclude turns the request's acknowledgement reaction into the
// outcome's.
func (w *watcher) conclude(ctx context.Context) {
	c, ok := w.t.(bot.Concluder)
	if !ok {
		return
	}
	req, err := w.r.st.ChatPost(ctx, w.v.taskID, "request")
	if err != nil {
		return // acknowledged with a reply, or started elsewhere
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := c.Conclude(cctx, req.Channel, req.MessageID, w.v.state == runner.StateSucceeded); err != nil {
		w.r.log.Warn("relay: marking the request with its outcome", "task", w.v.taskID, "err", err)
	}
}

// postStatus posts the status message and records it.
func (w *watcher) postStatus(ctx context.Context) error {
	r := w.r
	text := r.redact.String(w.v.render(w.t.Format(), r.now()))
	id, err := r.post(ctx, w.t, bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: text})
	if err != nil {
		return fmt.Errorf("posting the status message: %w", err)
	}
	w.bind(ctx, id)
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: "status", Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}); err != nil {
		return err
	}
	if p, err := r.st.ChatPost(ctx, w.v.taskID, "status"); err == nil {
		w.status = p.MessageID // a racing node's post wins; ours stays as it is
	}
	w.lead(w.status)
	w.shown = text
	return nil
}

// editStatus edits the status message to the current view. paced is
// false when the caller took the channel's slot already.
func (w *watcher) editStatus(ctx context.Context, wait bool) error {
	r := w.r
	if w.deferred {
		return nil // nothing to edit yet
	}
	text := r.redact.String(w.v.render(w.t.Format(), r.now()))
	if text == w.shown {
		return nil
	}
	m := bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: text}
	var err error
	if wait && w.urgent {
		err = r.editUrgent(ctx, w.t, w.status, m)
	} else if wait {
		err = r.edit(ctx, w.t, w.status, m)
	} else if err = w.t.Edit(context.WithoutCancel(ctx), w.status, m); err != nil {
		if d, ok := bot.RetryAfter(err); ok {
			r.pace.penalize(w.key(), d)
		}
		err = r.edit(ctx, w.t, w.status, m)
	}
	if err == nil {
		w.shown = text
	}
	return err
}

// post makes the separate messages some events deserve, once each: an
// approval request, a question, a sub-agent's report, the final report.
func (w *watcher) post(ctx context.Context, ev runner.Event) {
	switch ev.Type {
	case "approval_requested", "question":
		// The thread's first message is its status, then what asks for
		// a person.
		if err := w.showStatus(ctx); err != nil {
			w.r.log.Warn("relay: posting the status message", "task", w.v.taskID, "err", err)
		}
	}
	switch ev.Type {
	case "approval_requested":
		w.postApproval(ctx, ev)
	case "approval_decided":
		var p struct {
			ApprovalID string `json:"approval_id"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return
		}
		delete(w.reminders, p.ApprovalID)
		if a, err := w.r.svc.Approval(ctx, p.ApprovalID); err == nil && a.TaskID == w.v.taskID {
			w.r.showDecided(ctx, a)
		}
	case "fleet_updated":
		if w.summaries == nil {
			w.summaries = map[string]string{}
		}
		for _, n := range w.v.fleet {
			if n.Summary != "" {
				w.summaries[n.ID] = n.Summary
			}
		}
	case "question":
		var p struct {
			Question string `json:"question"`
		}
		if json.Unmarshal(ev.Payload, &p) == nil && p.Question != "" {
			f := w.t.Format()
			w.once(ctx, ev, f.Bold("Question")+f.Escape(" for ")+w.r.mention(ctx, w.t, w.v.requester)+"\n"+
				f.Escape(p.Question)+"\n"+f.Escape("Reply in this thread to answer."))
		}
	case "subagent_finished":
		var p struct {
			ID, State, Reason, Parent string
		}
		// A nested sub-agent (Parent set) always folds into the tree.
		if json.Unmarshal(ev.Payload, &p) == nil && p.ID != "" && p.Parent == "" && w.v.fleetNode(p.ID) < 0 {
			// A sub-agent outside the fleet tree gets its own message; a
			// fleet's node folds into the status message's tree.
			f := w.t.Format()
			text := f.Bold(f.Escape("Sub-agent "+p.ID)) + f.Escape(" "+p.State)
			if p.Reason != "" {
				text += f.Escape(" (" + p.Reason + ")")
			}
			if s := w.summaries[p.ID]; s != "" {
				text += "\n" + f.Escape(s)
			}
			w.once(ctx, ev, text)
		}
	case "final_report":
		w.once(ctx, ev, w.report(ctx, ev, false))
	case "budget_warning":
		if text, ok := budgetWarning(w.t.Format(), ev.Payload); ok {
			w.once(ctx, ev, text)
		}
	}
}

// once posts text under the event's key unless it was posted before. Past
// the per-task cap nothing new is posted — the status message says how
// much was held back — except the final report, which gets what room is
// left (at least one message) and keeps its tail.
func (w *watcher) once(ctx context.Context, ev runner.Event, text string) {
	r := w.r
	key := "ev:" + strconv.FormatInt(ev.Seq, 10)
	if _, err := r.st.ChatPost(ctx, w.v.taskID, key); err == nil {
		return
	}
	room := r.cfg.MaxPostsPerTask - w.posts
	final := ev.Type == "final_report"
	if room <= 0 && !final {
		w.v.held++
		return
	}
	parts := bot.Split(r.redact.String(text), w.t.Format().Limit())
	if final && len(parts) > max(room, 1) {
		parts = bot.Split(r.redact.String(w.report(ctx, ev, true)), w.t.Format().Limit())
		if keep := max(room, 1); len(parts) > keep {
			parts = parts[len(parts)-keep:]
		}
	} else if !final && len(parts) > room {
		w.v.held++
		parts = parts[:room]
	}
	for i, part := range parts {
		id, err := r.post(ctx, w.t, bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: part})
		if err != nil {
			r.log.Warn("relay: post failed", "task", w.v.taskID, "event", ev.Type, "err", err)
			return
		}
		w.posts++
		w.bind(ctx, id)
		partKey := key
		if i > 0 {
			partKey += "." + strconv.Itoa(i)
		}
		if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: partKey,
			Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}); err != nil {
			// The post is out; unrecorded, a restart would post it again.
			r.log.Warn("relay: recording a post failed", "task", w.v.taskID, "key", partKey, "err", err)
		}
	}
}

// report renders a final_report event; compact leaves out the diff stat
// and keeps less of the answer, for a thread that reached its post cap.
func (w *watcher) report(ctx context.Context, ev runner.Event, compact bool) string {
	var p struct {
		State       runner.State `json:"state"`
		Summary     string       `json:"summary"`
		FinalAnswer string       `json:"final_answer"`
		DiffStat    string       `json:"diff_stat"`
		Branch      string       `json:"branch"`
		Tokens      struct{ Prompt, Completion int64 }
		Cost        float64           `json:"cost"`
		Unpriced    int               `json:"unpriced_tokens"`
		DurationMS  int64             `json:"duration_ms"`
		Durations   *runner.Durations `json:"durations"`
		Reason      string            `json:"reason"`
		Error       string            `json:"error"`
		PR          *struct {
			URL    string `json:"url"`
			Number int    `json:"number"`
			CI     *struct {
				State  string `json:"state"`
				Checks []struct {
					State string `json:"state"`
				} `json:"checks"`
			} `json:"ci"`
		} `json:"pr"`
		Deliverables []struct {
			Path        string `json:"path"`
			Description string `json:"description"`
		} `json:"deliverables"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	f := w.t.Format()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", stateIcon(p.State), f.Bold(f.Escape("Task "+w.v.taskID+" "+stateWords(p.State))))
	if reason := w.reasonWords(p.State, p.Error, p.Reason); reason != "" {
		if p.State != runner.StateSucceeded && p.State != runner.StateCancelled {
			// The requester is the one to act on a task that stopped short.
			b.WriteString(w.r.mention(ctx, w.t, w.v.requester) + f.Escape(": "))
		}
		b.WriteString(f.Escape(reason) + "\n")
	}
	body, keep := cmpStr(p.FinalAnswer, p.Summary), w.r.cfg.MaxReportRunes
	if compact {
		keep = min(keep, f.Limit()/2)
	}
	if body != "" {
		b.WriteString(f.Escape(bot.Tail(body, keep)) + "\n")
	}
	if p.DiffStat != "" && !compact {
		b.WriteString(f.Code(f.Escape(bot.Tail(p.DiffStat, 2000))) + "\n")
	}
	if len(p.Deliverables) > 0 {
		b.WriteString(f.Bold(f.Escape("Deliverables")) + "\n")
		for _, d := range p.Deliverables {
			line := "• " + f.Code(f.Escape(d.Path))
			if d.Description != "" {
				line += f.Escape(" — " + d.Description)
			}
			b.WriteString(line + "\n")
		}
	}
	var facts []string
	if p.PR != nil { // the pull request the branch was published as
		facts = append(facts, fmt.Sprintf("PR #%d %s", p.PR.Number, p.PR.URL))
		if ci := p.PR.CI; ci != nil { // "CI success 5/5 passing"
			passing := 0
			for _, c := range ci.Checks {
				if c.State == "success" {
					passing++
				}
			}
			facts = append(facts, fmt.Sprintf("CI %s %d/%d passing", ci.State, passing, len(ci.Checks)))
		}
	} else if p.Branch != "" {
		facts = append(facts, "branch "+p.Branch)
	}
	facts = append(facts, fmt.Sprintf("%d tokens", p.Tokens.Prompt+p.Tokens.Completion))
	if p.Cost > 0 || p.Unpriced > 0 {
		facts = append(facts, runner.FormatCost(p.Cost, p.Unpriced)) // "unpriced", never $0
	}
	if p.Durations != nil { // "ran 3m12s · waited 25m00s for approval"
		facts = append(facts, p.Durations.String())
	} else { // a report from before the split: this run's time
		facts = append(facts, "ran "+(time.Duration(p.DurationMS)*time.Millisecond).Round(time.Second).String())
	}
	b.WriteString(f.Escape(strings.Join(facts, " · ")))
	if w.v.link != "" {
		b.WriteString("\n" + f.Escape(w.v.link))
	}
	return b.String()
}

// reasonWords is the report's reason: the runner's sentence, except for
// a refused call, which the relay names from the task's own log (the
// runner's sentence points at that log) with what would let it run.
func (w *watcher) reasonWords(state runner.State, code, reason string) string {
	if w.v.refusal == nil || state == runner.StateSucceeded {
		return reason
	}
	end, _, _ := strings.Cut(code, " ")
	switch end {
	case "refused", "unattended", "declined", "expired", "deny_rule":
	default:
		return reason
	}
	return refusalWords(w.v.refusal)
}

// bind makes a message the relay posted for the task a way into its
// thread: on Telegram a reply to any of them is a reply to the task.
func (w *watcher) bind(ctx context.Context, messageID string) {
	if err := w.r.st.BindThread(context.WithoutCancel(ctx), w.t.Name(), w.target.Channel, messageID, w.v.taskID); err != nil {
		w.r.log.Warn("relay: binding a post to its task", "task", w.v.taskID, "err", err)
	}
}
