package acp

import (
	"context"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/session"
)

// The Coordinator ([agent] planner_model, session.Coordinate) routes each
// prompt as it routes a `run` and a task's turns: the executor runs with
// the planner's plan, or the turn ends with the plan alone (plan-only,
// which plan mode asks for), or the plan waits for the editor's user to
// approve it (a prompt that asks to wait for approval, a plan-first goal).

// approvedPlan follows an approved plan in the executor's input.
const approvedPlan = "The plan above is approved. Carry it out now; check its candidate assumptions as you go."

// The options of a plan approval.
const (
	optApprovePlan = "approve"
	optRejectPlan  = "reject"
)

// coordinatedRun runs one normal- or plan-mode prompt through the
// Coordinator. typed is what the person wrote, text what the executor
// would read.
func (l *live) coordinatedRun(ctx context.Context, sess *session.Session, ag *agent.Agent, typed, text string, planOnly bool) agent.Result {
	c := sess.Coordinate(ctx, session.Turn{Text: typed, Input: text, PlanOnly: planOnly})
	if c.Execute {
		return ag.Run(ctx, c.Input)
	}
	if c.Err == nil && c.Plan != "" {
		l.a.notify(l.id, sdk.UpdateAgentMessageText(c.Plan))
	}
	if c.Err == nil && c.Detail.Route == session.RoutePlanForApproval {
		d, err := l.reviewPlan(ctx, goals.PlanProposal{Round: 1, Summary: c.Plan})
		if err == nil && d.Approved {
			l.a.notify(l.id, sdk.UpdateAgentMessageText("\n\n"))
			return ag.Run(ctx, c.Input+"\n\n<plan>\n"+strings.TrimSpace(c.Plan)+"\n</plan>\n"+approvedPlan)
		}
	}
	// Held: the turn and its plan join the transcript (Hold) and the
	// conversation, so the next prompt goes on from the plan.
	res := sess.Hold(c)
	add := []agent.Message{{Role: agent.RoleUser, Content: c.Input}}
	if c.Err == nil && c.Plan != "" {
		add = append(add, agent.Message{Role: agent.RoleAssistant, Content: c.Plan})
	}
	l.extend(sess, add)
	return res
}

// reviewPlan is the sessions' goals.PlanApprover: the plan is shown as a
// "plan" tool call and approved or rejected through
// session/request_permission; the decision is recorded like a call's.
func (l *live) reviewPlan(ctx context.Context, p goals.PlanProposal) (goals.PlanDecision, error) {
	n := l.questions.Add(1)
	id := sdk.ToolCallId("plan-" + strconv.FormatInt(n, 10))
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.Summary))
	for _, it := range p.Plan {
		b.WriteString("\n- " + it.Content)
		for _, st := range it.Steps {
			b.WriteString("\n  - " + st.Content)
		}
	}
	l.a.notify(l.id, sdk.StartToolCall(id, "Approve the plan", sdk.WithStartKind(sdk.ToolKindThink),
		sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(bound(b.String())))})))
	resp, err := sdk.SendRequest[sdk.RequestPermissionResponse](l.a.conn, ctx, "session/request_permission", sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(l.id),
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: id},
		Options: []sdk.PermissionOption{
			{OptionId: optApprovePlan, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Approve the plan"},
			{OptionId: optRejectPlan, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"},
		},
	})
	if ctx.Err() != nil {
		return goals.PlanDecision{}, context.Cause(ctx)
	}
	approved := err == nil && resp.Outcome.Selected != nil && string(resp.Outcome.Selected.OptionId) == optApprovePlan
	status, choice := sdk.ToolCallStatusCompleted, optAllowOnce
	if !approved {
		status, choice = sdk.ToolCallStatusFailed, optReject
	}
	l.a.notify(l.id, sdk.UpdateToolCall(id, sdk.WithUpdateStatus(status)))
	l.observe(agent.Event{Type: EventApproval, Data: Approval{
		Tool: "plan", CallID: string(id), Choice: choice, DecidedBy: "acp:" + l.a.clientName(),
	}})
	return goals.PlanDecision{Approved: approved}, nil
}
