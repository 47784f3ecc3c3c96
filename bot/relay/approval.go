package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// postApproval posts an approval request with its buttons, once.
func (w *watcher) postApproval(ctx context.Context, ev runner.Event) {
	r := w.r
	var p struct {
		ApprovalID string    `json:"approval_id"`
		Tool       string    `json:"tool"`
		Subject    string    `json:"subject"`
		Preview    string    `json:"preview"`
		Reason     string    `json:"reason"`
		Scopes     []string  `json:"scopes"`
		ExpiresAt  time.Time `json:"expires_at"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil || p.ApprovalID == "" {
		return
	}
	if _, err := r.st.ChatPost(ctx, w.v.taskID, approvalKey(p.ApprovalID)); err == nil {
		return // posted before a restart
	} else if !errors.Is(err, runner.ErrRecordNotFound) {
		r.log.Warn("relay: approval lookup", "approval", p.ApprovalID, "err", err)
		return
	}
	a, err := r.svc.Approval(ctx, p.ApprovalID)
	if err != nil {
		return
	}
	f := w.t.Format()
	var b strings.Builder
	b.WriteString("✋ " + f.Bold(f.Escape("Approval needed: "+p.Tool)) + "\n")
	if p.Subject != "" {
		b.WriteString(f.Code(f.Escape(bot.Tail(p.Subject, 1500))) + "\n")
	}
	if p.Preview != "" && p.Preview != p.Subject {
		b.WriteString(f.Code(f.Escape(bot.Tail(p.Preview, 1500))) + "\n")
	}
	if p.Reason != "" {
		b.WriteString(f.Escape("Why: "+firstLine(p.Reason, 300)) + "\n")
	}
	if w.v.step != "" {
		b.WriteString(f.Escape("Step: "+w.v.step) + "\n")
	}
	b.WriteString(f.Escape("Task " + w.v.taskID + " · expires " + p.ExpiresAt.UTC().Format("15:04 MST") + " (no answer means deny)"))
	if w.v.link != "" {
		b.WriteString("\n" + f.Escape(w.v.link))
	}
	text := r.redact.String(b.String())
	if parts := bot.Split(text, f.Limit()); len(parts) > 1 {
		text = parts[0]
	}
	buttons := []bot.Button{{Label: "Allow once", Data: bot.ApprovalButton(a.ID, runner.AllowOnce), Style: "primary"}}
	if len(p.Scopes) > 0 {
		buttons = append(buttons, bot.Button{Label: "Allow for this task", Data: bot.ApprovalButton(a.ID, runner.AllowTask)})
	}
	buttons = append(buttons, bot.Button{Label: "Deny", Data: bot.ApprovalButton(a.ID, runner.Deny), Style: "danger"})
	id, err := r.post(ctx, w.t, bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: text, Buttons: buttons})
	if err != nil {
		r.log.Warn("relay: posting an approval failed", "approval", a.ID, "err", err)
		return
	}
	w.bind(ctx, id)
	post := runner.ChatPost{TaskID: w.v.taskID, Key: approvalKey(a.ID), Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), post); err != nil {
		r.log.Warn("relay: saving an approval post", "approval", a.ID, "err", err)
	}
	// Decided while we posted (from the API, or expired)? Show it.
	if cur, err := r.svc.Approval(ctx, a.ID); err == nil && cur.State != runner.ApprovalPending {
		r.editDecided(ctx, w.t, post, cur)
	}
}

// editDecided replaces an approval message's buttons with who decided and
// when.
func (r *Relay) editDecided(ctx context.Context, t bot.Transport, post runner.ChatPost, a runner.Approval) {
	if a.State == runner.ApprovalPending {
		return
	}
	f := t.Format()
	at := a.DecidedAt.UTC().Format("15:04:05 MST")
	var line string
	switch {
	case a.State == runner.ApprovalExpired:
		line = "⌛ Expired at " + at + " — the call was refused."
	case a.Decision == runner.Deny:
		line = "🚫 Denied by " + a.DecidedBy + " at " + at
	case a.Decision == runner.AllowTask:
		line = "✅ Allowed for this task (" + a.Scope + ") by " + a.DecidedBy + " at " + at
	default:
		line = "✅ Allowed once by " + a.DecidedBy + " at " + at
	}
	text := f.Bold(f.Escape(a.Tool)) + " " + f.Code(f.Escape(firstLine(a.Subject, 300))) + "\n" + f.Escape(line)
	if err := r.edit(ctx, t, post.MessageID, bot.Message{Channel: post.Channel, Text: r.redact.String(text)}); err != nil {
		r.log.Warn("relay: editing a decided approval", "approval", a.ID, "err", err)
	}
}
