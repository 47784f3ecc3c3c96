package relay

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"reasonix/bot"
	"reasonix/runner"
)

// A budget card is the runner's approval record of tool "budget": a task
// with this thread as its home spent its budget and waits for an approver
// to give it the same budget again, stop it, or stop it and publish what
// exists. It is posted, copied, reminded and edited like any approval;
// only its words and buttons differ.

// budgetText is the card's message in f's markup, before redaction: the
// runner's preview holds what was spent, the plan's progress and the
// last step.
func (q approvalRequest) budgetText(f bot.Format, taskID string) string {
	var b strings.Builder
	b.WriteString("💰 " + f.Bold(f.Escape("More budget?")) + "\n")
	b.WriteString(f.Escape(bot.Tail(strings.TrimSpace(q.Preview), 1500)) + "\n")
	if q.Deciders != "" {
		b.WriteString(f.Escape("Asking: ") + q.Deciders + "\n")
	}
	b.WriteString(f.Escape("Task " + taskID + " · " + expiryWords(q.ExpiresAt, "stop")))
	return b.String()
}

// budgetButtons are the card's choices: + the same budget, Stop, Stop and
// publish what exists.
func budgetButtons(approvalID, budget string) []bot.Button {
	more := "+ " + strings.TrimSpace(budget)
	if budget == "" {
		more = "+ the same budget"
	}
	return []bot.Button{
		{Label: more, Data: bot.ApprovalButton(approvalID, runner.AllowOnce), Style: "primary"},
		{Label: "Stop", Data: bot.ApprovalButton(approvalID, runner.Deny), Style: "danger"},
		{Label: "Stop and publish what exists", Data: bot.ApprovalButton(approvalID, runner.StopPublish)},
	}
}

// budgetDecidedLine says how a budget card was answered, for the edit
// that replaces its buttons.
func budgetDecidedLine(a runner.Approval, by, at string) string {
	switch {
	case a.State == runner.ApprovalExpired:
		return "⌛ Nobody answered by " + at + " — the task stopped."
	case a.Decision == runner.StopPublish:
		return "⏹ Stopped by " + by + " at " + at + "; what exists is published."
	case a.Decision == runner.Deny:
		return "⏹ Stopped by " + by + " at " + at
	default:
		return "➕ More budget given by " + by + " at " + at + "; the task continues."
	}
}

// budgetWarning is the post for a budget_warning event: the run crossed
// [runner] budget_warn of its cost or token budget. ok is false for a
// payload that is not one.
func budgetWarning(f bot.Format, payload json.RawMessage) (string, bool) {
	var p struct {
		Budget       string
		Limit, Spent float64
		Share        float64
		Scope        string // "goal_slice" for a goal's budget slice
	}
	if json.Unmarshal(payload, &p) != nil || p.Limit <= 0 {
		return "", false
	}
	pct := int(math.Round(100 * p.Spent / p.Limit))
	whose := "the"
	if p.Scope == "goal_slice" {
		whose = "the goal's"
	}
	var used string
	switch p.Budget {
	case "cost":
		used = fmt.Sprintf("%d%% of %s cost budget used: $%.4f of $%s", pct, whose, p.Spent, trimFloat(p.Limit))
	case "tokens":
		used = fmt.Sprintf("%d%% of %s token budget used: %.0f of %.0f tokens", pct, whose, p.Spent, p.Limit)
	case "turns":
		used = fmt.Sprintf("%d%% of %s turn budget used: %.0f of %.0f turns", pct, whose, p.Spent, p.Limit)
	default:
		return "", false
	}
	return "⚠ " + f.Escape(used+". At the limit the task asks whether to go on."), true
}

func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}
