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
// approvers again. The task's watcher keeps the clock, so exactly one
// node reminds, and the reminder's record in the store keeps a restarted
// relay from reminding twice.

// remindKey is the store key of approval id's reminder.
func remindKey(id string) string { return "remind:" + id }

// minRemindLead is the least time before the deadline a reminder is worth
// posting: closer to it, the expiry edit says it all.
const minRemindLead = time.Second

// remindAt is when approval a is reminded of: halfway to its deadline.
func remindAt(a runner.Approval) time.Time {
	return a.CreatedAt.Add(a.ExpiresAt.Sub(a.CreatedAt) / 2)
}

// scheduleReminder has the watcher remind of approval a when it is
// pending and not reminded of yet.
func (w *watcher) scheduleReminder(ctx context.Context, a runner.Approval) {
	if a.State != runner.ApprovalPending || a.ExpiresAt.IsZero() || !a.ExpiresAt.After(a.CreatedAt) {
		return
	}
	if _, err := w.r.st.ChatPost(ctx, w.v.taskID, remindKey(a.ID)); !errors.Is(err, runner.ErrRecordNotFound) {
		return // reminded already (or the store cannot say: no second chance of a duplicate)
	}
	if w.reminders == nil {
		w.reminders = map[string]time.Time{}
	}
	w.reminders[a.ID] = remindAt(a)
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

// remind posts the reminder of approval id, if it is still pending and
// its deadline not too close.
func (w *watcher) remind(ctx context.Context, id string) {
	r := w.r
	a, err := r.svc.Approval(ctx, id)
	if err != nil || a.State != runner.ApprovalPending || a.ExpiresAt.Sub(r.now()) < minRemindLead {
		return
	}
	main, err := r.st.ChatPost(ctx, w.v.taskID, approvalKey(id))
	if err != nil {
		return // never posted: nothing to remind of
	}
	f := w.t.Format()
	text := "⏰ " + f.Bold(f.Escape("Still waiting for a decision: "+a.Tool)) + "\n" +
		f.Escape("The request above expires at "+a.ExpiresAt.UTC().Format("15:04 MST")+" (in "+
			a.ExpiresAt.Sub(r.now()).Round(time.Minute).String()+"); no answer means deny.")
	if who := r.approverMentions(ctx, w.t, a); who != "" {
		text += "\n" + f.Escape("Asking: ") + who
	}
	text = r.redact.String(text)
	posted, err := r.post(ctx, w.t, bot.Message{Channel: main.Channel, Thread: w.target.Thread, Text: text})
	if err != nil {
		r.log.Warn("relay: posting an approval's reminder", "approval", id, "err", err)
		return
	}
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: remindKey(id),
		Transport: w.t.Name(), Channel: main.Channel, MessageID: posted}); err != nil {
		r.log.Warn("relay: recording an approval's reminder", "approval", id, "err", err)
	}
	for _, c := range r.approvalCopies(ctx, w.v.taskID, id) {
		if t, ok := r.transports[c.Transport]; ok {
			// Under the copy: the approver's notification leads to it.
			if _, err := r.post(ctx, t, bot.Message{Channel: c.Channel, Thread: c.MessageID, Text: text}); err != nil {
				r.log.Warn("relay: posting an approval's reminder under a copy", "approval", id, "channel", c.Channel, "err", err)
			}
		}
	}
}
