package relay

import (
	"context"
	"errors"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// A request nobody answers denies at its deadline, and a person who
// missed the first notification rarely looks again on their own: at half
// the time left, the relay posts one reminder under the request — in the
// task's thread and under each copy (see reach.go) — mentioning the
// approvers again. A request without a deadline (approval_ttl = "none")
// is reminded of every [bot] approval_remind instead, for as long as it
// waits. The task's watcher keeps the clock, and each reminder is
// recorded on the approval (runner.Service.RecordReminder, a
// compare-and-swap) before it is posted: a restarted relay picks the
// series up where it was, and no reminder is posted twice, by one node or
// two.

// remindKey is the store key of approval id's reminder, as recorded
// before reminders were kept on the approval (still honoured: an
// approval reminded of before an upgrade is not reminded of again).
func remindKey(id string) string { return "remind:" + id }

// minRemindLead is the least time before the deadline a reminder is worth
// posting: closer to it, the expiry edit says it all.
const minRemindLead = time.Second

// remindAt is when approval a is reminded of next: halfway to its
// deadline, or, without one, approval_remind after its last reminder (or
// its request); zero when it is not to be reminded of again.
func (r *Relay) remindAt(a runner.Approval) time.Time {
	if a.State != runner.ApprovalPending {
		return time.Time{}
	}
	if a.NoDeadline() {
		last := a.RemindedAt
		if last.IsZero() {
			last = a.CreatedAt
		}
		return last.Add(r.cfg.Bot.Remind())
	}
	if !a.RemindedAt.IsZero() || !a.ExpiresAt.After(a.CreatedAt) {
		return time.Time{}
	}
	return a.CreatedAt.Add(a.ExpiresAt.Sub(a.CreatedAt) / 2)
}

// scheduleReminder has the watcher remind of approval a when it is
// pending and a reminder is due for it.
func (w *watcher) scheduleReminder(ctx context.Context, a runner.Approval) {
	at := w.r.remindAt(a)
	if at.IsZero() {
		return
	}
	if !a.NoDeadline() {
		if _, err := w.r.st.ChatPost(ctx, w.v.taskID, remindKey(a.ID)); !errors.Is(err, runner.ErrRecordNotFound) {
			return // reminded already (or the store cannot say: no second chance of a duplicate)
		}
	}
	if w.reminders == nil {
		w.reminders = map[string]time.Time{}
	}
	w.reminders[a.ID] = at
}

// nextReminder is the earliest reminder due, zero for none.
func (w *watcher) nextReminder() time.Time {
	var next time.Time
	for _, at := range w.reminders {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// remindDue posts the reminders that are due.
func (w *watcher) remindDue(ctx context.Context) {
	now := w.r.now()
	for id, at := range w.reminders {
		if at.After(now) {
			continue
		}
		delete(w.reminders, id)
		w.remind(ctx, id)
	}
}

// remind posts the reminder of approval id, if it is still pending, due
// and its deadline not too close, and schedules the next one of an
// approval without a deadline.
func (w *watcher) remind(ctx context.Context, id string) {
	r := w.r
	a, err := r.svc.Approval(ctx, id)
	if err != nil || a.State != runner.ApprovalPending || !a.NoDeadline() && a.ExpiresAt.Sub(r.now()) < minRemindLead {
		return
	}
	now := r.now()
	if at := r.remindAt(a); at.IsZero() || at.After(now) {
		w.scheduleReminder(ctx, a) // another node (or this one before a restart) reminded meanwhile
		return
	}
	main, err := r.st.ChatPost(ctx, w.v.taskID, approvalKey(id))
	if err != nil {
		return // never posted: nothing to remind of
	}
	won, err := r.svc.RecordReminder(ctx, id, a.RemindedAt, now)
	if err != nil {
		r.log.Warn("relay: recording an approval's reminder", "approval", id, "err", err)
		w.retryReminder(id, now)
		return
	}
	if !won {
		if cur, err := r.svc.Approval(ctx, id); err == nil {
			w.scheduleReminder(ctx, cur)
		}
		return
	}
	text := r.reminderText(ctx, w.t, a, now)
	posted, err := r.post(ctx, w.t, bot.Message{Channel: main.Channel, Thread: w.target.Thread, Text: text})
	if err != nil {
		r.log.Warn("relay: posting an approval's reminder", "approval", id, "err", err)
	} else if !a.NoDeadline() {
		if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: remindKey(id),
			Transport: w.t.Name(), Channel: main.Channel, MessageID: posted}); err != nil {
			r.log.Warn("relay: recording an approval's reminder", "approval", id, "err", err)
		}
	}
	for _, c := range r.approvalCopies(ctx, w.v.taskID, id) {
		if t, ok := r.transports[c.Transport]; ok {
			// Under the copy: the approver's notification leads to it.
			if _, err := r.post(ctx, t, bot.Message{Channel: c.Channel, Thread: c.MessageID, Text: r.reminderText(ctx, t, a, now)}); err != nil {
				r.log.Warn("relay: posting an approval's reminder under a copy", "approval", id, "channel", c.Channel, "err", err)
			}
		}
	}
	a.RemindedAt = now
	w.scheduleReminder(ctx, a)
}

// retryReminder tries the reminder of approval id again a little later:
// the store could not record it.
func (w *watcher) retryReminder(id string, now time.Time) {
	if w.reminders == nil {
		w.reminders = map[string]time.Time{}
	}
	w.reminders[id] = now.Add(time.Minute)
}

// reminderText is the reminder of approval a in t's markup.
func (r *Relay) reminderText(ctx context.Context, t bot.Transport, a runner.Approval, now time.Time) string {
	f := t.Format()
	text := "⏰ " + f.Bold(f.Escape("Still waiting for a decision: "+a.Tool)) + "\n"
	if a.NoDeadline() {
		text += f.Escape("The request above has no deadline: the task waits until someone decides it (asked " +
			now.Sub(a.CreatedAt).Round(time.Minute).String() + " ago).")
	} else {
		text += f.Escape("The request above expires at " + a.ExpiresAt.UTC().Format("15:04 MST") + " (in " +
			a.ExpiresAt.Sub(now).Round(time.Minute).String() + "); no answer means deny.")
	}
	if who := r.approverMentions(ctx, t, a); who != "" {
		text += "\n" + f.Escape("Asking: ") + who
	}
	return r.redact.String(text)
}
