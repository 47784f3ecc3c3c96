package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

		AlwaysScope string `json:"always_scope"` // "" when Allow always is not possible

		Kind   string `json:"kind"`   // "budget": a budget card (budgetcard.go)
		Budget string `json:"budget"` // a budget card's "+" amount
	}
	if json.Unmarshal(ev.Payload, &p) != nil || p.ApprovalID == "" {
		return
	}
	a, err := r.svc.Approval(ctx, p.ApprovalID)
	if err != nil {
		return
	}
	f := w.t.Format()
	req := approvalRequest{Tool: p.Tool, Subject: p.Subject, Preview: p.Preview, Reason: p.Reason, ExpiresAt: p.ExpiresAt,
		Deciders: r.approverMentions(ctx, w.t, a)}
	var text string
	var buttons []bot.Button
	if p.Kind == "budget" && a.Tool == "budget" {
		text, buttons = r.redact.String(req.budgetText(f, w.v.taskID)), budgetButtons(a.ID, p.Budget)
	} else {
		text = r.redact.String(req.text(f, w.v.step, w.v.taskID, w.v.link))
		buttons = []bot.Button{{Label: "Allow once", Data: bot.ApprovalButton(a.ID, runner.AllowOnce), Style: "primary"}}
		if len(p.Scopes) > 0 {
			buttons = append(buttons, bot.Button{Label: "Allow for this task", Data: bot.ApprovalButton(a.ID, runner.AllowTask)})
		}
		if p.AlwaysScope != "" {
			buttons = append(buttons, bot.Button{Label: "Allow always", Data: bot.ApprovalButton(a.ID, runner.AllowAlways)})
		}
		buttons = append(buttons, bot.Button{Label: "Deny", Data: bot.ApprovalButton(a.ID, runner.Deny), Style: "danger"})
	}
	if parts := bot.Split(text, f.Limit()-200); len(parts) > 1 {
		text = parts[0] // room for a copy's line saying where it comes from
	}
	if _, err := r.st.ChatPost(ctx, w.v.taskID, approvalKey(p.ApprovalID)); err == nil {
		// Posted before a restart; its copies may not all have been.
		if a.State == runner.ApprovalPending {
			w.postCopies(ctx, a, text, buttons)
			w.scheduleReminder(ctx, a)
		}
		return
	} else if !errors.Is(err, runner.ErrRecordNotFound) {
		r.log.Warn("relay: approval lookup", "approval", p.ApprovalID, "err", err)
		return
	}
	// The copies first: their channels are not the thread's, so they wait
	// for nothing the thread's pacing holds back.
	w.postCopies(ctx, a, text, buttons)
	if a.State == runner.ApprovalPending && !w.v.state.Terminal() {
		// The status says "waiting for approval" before the buttons are
		// there to click: a fast click must not leave it behind.
		w.v.state = runner.StateWaitingApproval
		if err := w.showStatus(ctx); err != nil {
			r.log.Warn("relay: posting the status message", "task", w.v.taskID, "err", err)
		}
		w.urgent = true
		if err := w.editStatus(ctx, true); err != nil {
			r.log.Warn("relay: status edit failed", "task", w.v.taskID, "err", err)
		}
		w.urgent = false
	}
	id, err := r.postUrgent(ctx, w.t, bot.Message{Channel: w.target.Channel, Thread: w.target.Thread, Text: text, Buttons: buttons})
	if err != nil {
		r.log.Warn("relay: posting an approval failed", "approval", a.ID, "err", err)
		return
	}
	w.bind(ctx, id)
	post := runner.ChatPost{TaskID: w.v.taskID, Key: approvalKey(a.ID), Transport: w.t.Name(), Channel: w.target.Channel, MessageID: id}
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), post); err != nil {
		r.log.Warn("relay: saving an approval post", "approval", a.ID, "err", err)
	}
	w.scheduleReminder(ctx, a)
	// Decided while we posted (from the API, a copy, or expired)? Show it.
	if cur, err := r.svc.Approval(ctx, a.ID); err == nil && cur.State != runner.ApprovalPending {
		r.showDecided(ctx, cur)
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
	by := r.who(ctx, a.DecidedBy)
	var line string
	switch {
	case a.Tool == "budget":
		line = budgetDecidedLine(a, by, at)
	case a.State == runner.ApprovalExpired && a.NoDeadline():
		line = "⌛ Closed at " + at + " — the task ended before anyone decided."
	case a.State == runner.ApprovalExpired:
		line = "⌛ Expired at " + at + " — the call was refused."
	case a.Decision == runner.Deny:
		line = "🚫 Denied by " + by + " at " + at
	case a.Decision == runner.AllowTask:
		line = "✅ Allowed for this task (" + a.Scope + ") by " + by + " at " + at
	case a.Decision == runner.AllowAlways:
		line = "✅ Allowed always (" + a.Scope + ") by " + by + " at " + at
	default:
		line = "✅ Allowed once by " + by + " at " + at
	}
	text := f.Bold(f.Escape(a.Tool))
	if items, ok := fleetItems(a.Tool, a.Preview); ok {
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		text += " " + f.Escape(fmt.Sprintf("of %d sub-agents: %s", len(items), strings.Join(ids, ", ")))
	} else if subject := firstLine(a.Subject, 300); subject != "" {
		text += " " + f.Code(f.Escape(subject))
	}
	text += "\n" + f.Escape(line)
	if err := r.edit(ctx, t, post.MessageID, bot.Message{Channel: post.Channel, Text: r.redact.String(text)}); err != nil {
		r.log.Warn("relay: editing a decided approval", "approval", a.ID, "err", err)
	}
}

// fleetItem is one task of a fleet call's arguments (the goals package's
// fleet tool; the relay may not import goals, and the JSON is the call's
// contract).
type fleetItem struct {
	ID        string   `json:"id"`
	Prompt    string   `json:"prompt"`
	DependsOn []string `json:"depends_on"`
}

// fleetItems reads the tasks of a fleet call from its preview (the call's
// arguments); ok is false for any other call, or arguments cut short.
func fleetItems(tool, preview string) ([]fleetItem, bool) {
	if tool != "fleet" {
		return nil, false
	}
	var args struct {
		Items []fleetItem `json:"items"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(preview)), &args) != nil || len(args.Items) == 0 {
		return nil, false
	}
	return args.Items, true
}

// expiryWords says when a request expires and what no answer means, or
// that it has no deadline (a zero expiry: approval_ttl = "none").
func expiryWords(expires time.Time, otherwise string) string {
	if expires.IsZero() {
		return "no deadline: waits until someone decides"
	}
	return "expires " + expires.UTC().Format("15:04 MST") + " (no answer means " + otherwise + ")"
}

// approvalRequest is what an approval request's message shows.
type approvalRequest struct {
	Tool, Subject, Preview, Reason string
	ExpiresAt                      time.Time
	// Deciders mentions who is asked to decide, in the message's markup
	// ("" when roles alone decide).
	Deciders string
}

// text is the request's message in f's markup, before redaction.
func (q approvalRequest) text(f bot.Format, step, taskID, link string) string {
	var b strings.Builder
	b.WriteString("✋ " + f.Bold(f.Escape("Approval needed: "+q.Tool)) + "\n")
	if items, ok := fleetItems(q.Tool, q.Preview); ok {
		// A fleet's arguments are JSON no one should have to read: list
		// its tasks, each under its node id, with what it waits for.
		b.WriteString(f.Escape(fmt.Sprintf("Starts %d sub-agents:", len(items))) + "\n")
		for _, it := range items {
			line := "• " + f.Bold(f.Escape(it.ID)) + " " + f.Escape(firstLine(it.Prompt, 200))
			if len(it.DependsOn) > 0 {
				line += f.Escape(" (after " + strings.Join(it.DependsOn, ", ") + ")")
			}
			b.WriteString(line + "\n")
		}
	} else {
		if q.Subject != "" {
			b.WriteString(f.Code(f.Escape(bot.Tail(q.Subject, 1500))) + "\n")
		}
		if strings.TrimSpace(q.Preview) != "" && q.Preview != q.Subject {
			b.WriteString(f.Code(f.Escape(bot.Tail(q.Preview, 1500))) + "\n")
		}
	}
	if q.Reason != "" {
		b.WriteString(f.Escape("Why: "+firstLine(q.Reason, 300)) + "\n")
	}
	if step != "" {
		b.WriteString(f.Escape("Step: "+step) + "\n")
	}
	if q.Deciders != "" {
		b.WriteString(f.Escape("Asking: ") + q.Deciders + "\n")
	}
	b.WriteString(f.Escape("Task " + taskID + " · " + expiryWords(q.ExpiresAt, "deny")))
	if link != "" {
		b.WriteString("\n" + f.Escape(link))
	}
	return b.String()
}
