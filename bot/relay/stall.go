package relay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// A task that runs and logs nothing for [runner] stall_after is stuck or
// very slow, and nobody watching the thread can tell which: the watcher
// says so once per silence — how long, and the last step it saw — with
// a Cancel button. Waiting for an approval or a person is no stall. The
// post's key carries the last event's sequence number, so a restarted
// relay does not say it again, and the next silence gets its own post.

// stallKey is the store key of the stall post after event seq.
func stallKey(seq int64) string { return "stall:" + strconv.FormatInt(seq, 10) }

// checkStall posts the stall notice when the task has been running
// without a new event for StallAfter since lastEvent.
func (w *watcher) checkStall(ctx context.Context) {
	r := w.r
	if w.v.state != runner.StateRunning || w.lastEvent.IsZero() || w.stalled == w.seen {
		return
	}
	silent := r.now().Sub(w.lastEvent)
	if silent < r.cfg.StallAfter {
		return
	}
	w.stalled = w.seen
	key := stallKey(w.seen)
	if _, err := r.st.ChatPost(ctx, w.v.taskID, key); !errors.Is(err, runner.ErrRecordNotFound) {
		return // said before a restart (or the store cannot tell: say nothing)
	}
	f := w.t.Format()
	text := "⏳ " + f.Bold(f.Escape(fmt.Sprintf("No progress for %d min", int(silent.Round(time.Minute)/time.Minute))))
	if w.v.step != "" {
		text += f.Escape(" — last step: " + firstLine(w.v.step, 200))
	}
	text += "\n" + f.Escape("It may be stuck. Cancel it, or let it go on: this message is not repeated until it moves again.")
	m := bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: r.redact.String(text),
		Buttons: []bot.Button{{Label: "Cancel task", Data: bot.CancelButton(w.v.taskID), Style: "danger"}}}
	id, err := r.post(ctx, w.t, m)
	if err != nil {
		r.log.Warn("relay: posting a stall notice", "task", w.v.taskID, "err", err)
		return
	}
	w.bind(ctx, id)
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), runner.ChatPost{TaskID: w.v.taskID, Key: key,
		Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}); err != nil {
		r.log.Warn("relay: recording a stall notice", "task", w.v.taskID, "err", err)
	}
}

// cancelClick cancels task taskID from a Cancel button: the message
// clicked must be one the relay posted for the task, and the clicker
// must be allowed to control it (its requester or an admin, as through
// the API); anything else changes nothing.
func (r *Relay) cancelClick(ctx context.Context, c bot.Click, taskID string) string {
	if owner, err := r.st.ThreadTask(ctx, c.Transport, c.Channel, c.MessageID); err != nil || owner != taskID {
		return "That button does not belong to this conversation; nothing changed."
	}
	task, err := r.svc.Task(ctx, taskID)
	var p runner.Principal
	if err == nil {
		p, err = r.principal(ctx, c.Transport, c.Team, c.User)
	}
	if err == nil {
		err = p.MayControl(task)
	}
	if err == nil {
		if task.State.Terminal() {
			return "Task " + taskID + " has ended already; nothing changed."
		}
		_, err = r.svc.Cancel(ctx, taskID)
	}
	if err != nil {
		return r.safeMessage(err, "cancelling the task")
	}
	r.log.Info("relay: task cancelled from a button", "task", taskID, "by", c.Requester())
	return "Cancelling task " + taskID + "."
}
