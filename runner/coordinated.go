package runner

import (
	"context"
	"errors"
	"strings"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// approvedPlanTurn is the executor's turn after a person approved a held
// plan: the plan is the conversation's last answer.
const approvedPlanTurn = "The plan above is approved. Carry it out now; check its candidate assumptions as you go."

// userTurn runs one user turn of a plain task through the Coordinator
// (session.Coordinate): with [agent] planner_model the turn is routed and
// the executor gets the plan with the text, or the turn ends with the plan
// in the transcript and nothing executed. A plan-for-approval plan becomes
// the task's plan approval (the one plan-first goals use), and the task
// waits for it without holding a worker.
//
// more are the messages that arrived with the turn: they steer the
// executor's run, or join a held turn so they are kept with it.
func (s *Service) userTurn(ctx context.Context, r *taskrun.Run, sess *session.Session, ag *agent.Agent, text string, synthetic bool, more []store.InboxMessage) outcome {
	return s.coordinatedTurn(ctx, r, sess, ag, session.Turn{Text: text, Input: expandReferences(ctx, sess, r.Task(), text), Synthetic: synthetic}, more)
}

// PlansOnly reports whether a plain task may be plan_only: [agent]
// planner_model names a planner. Chat's plan verb is then a plan-only
// task, else a plan-first goal.
func (s *Service) PlansOnly() bool { return strings.TrimSpace(s.set.Agent.PlannerModel) != "" }

// planOnlyTurn is the first turn of a plan_only task: the plan-only route
// whatever the text says. A planner is needed (submit checked it); one
// unconfigured since, the task fails rather than execute what was asked
// only to be planned.
func (s *Service) planOnlyTurn(ctx context.Context, r *taskrun.Run, sess *session.Session, ag *agent.Agent, more []store.InboxMessage) outcome {
	if !sess.PlannerConfigured() {
		return outcome{state: store.StateFailed, code: "plan_only"}
	}
	text := r.Task().Prompt
	return s.coordinatedTurn(ctx, r, sess, ag, session.Turn{Text: text, Input: expandReferences(ctx, sess, r.Task(), text), PlanOnly: true}, more)
}

// coordinatedTurn routes turn t and runs what the route says (userTurn).
func (s *Service) coordinatedTurn(ctx context.Context, r *taskrun.Run, sess *session.Session, ag *agent.Agent, t session.Turn, more []store.InboxMessage) outcome {
	c := sess.Coordinate(ctx, t)
	if c.Execute {
		for _, m := range more {
			ag.Steer(m.Text)
		}
		return s.classify(ctx, r, ag.Run(ctx, c.Input))
	}
	for _, m := range more {
		c.Input += "\n\n" + m.Text
	}
	if c.Err != nil || c.Detail.Route != session.RoutePlanForApproval {
		return s.classify(ctx, r, sess.Hold(c))
	}
	sess.Keep(c)
	d, err := (&planBroker{s: s, task: r.Task()}).ReviewPlan(ctx, heldProposal(c.Plan))
	if err == nil && d.Approved {
		// An identical plan was approved before and never used.
		return s.classify(ctx, r, ag.Run(ctx, c.Input+"\n\n<plan>\n"+c.Plan+"\n</plan>\n"+approvedPlanTurn))
	}
	return s.heldPlanOutcome(ctx, r, c.Plan, err)
}

// heldProposal is the approval form of a held plan: its hash binds the
// decision to the plan's exact text, which the transcript keeps, so the
// resumed task finds the decision again.
func heldProposal(plan string) goals.PlanProposal {
	return goals.PlanProposal{Round: 1, Summary: plan}
}

// heldPlanDecided continues a task whose conversation ends with a held
// plan once its approval is decided: approved, the executor carries it
// out; declined or expired, the task ends blocked with the plan as its
// answer. ok is false when the conversation's last answer is no held plan
// with a decision (the task goes on as before).
func (s *Service) heldPlanDecided(ctx context.Context, r *taskrun.Run, ag *agent.Agent, history []agent.Message) (outcome, bool, error) {
	plan := lastAnswer(history) // the caller checked that it closes the conversation
	if plan == "" {
		return outcome{}, false, nil
	}
	a, ok, err := s.decided(ctx, r.Task().ID, planHash(heldProposal(plan)))
	var se *suspendError
	switch {
	case errors.As(err, &se):
		// Woken before the decision: wait on.
		return s.classify(ctx, r, agent.Result{Outcome: agent.OutcomeSuspended, Err: err, FinalAnswer: plan}), true, nil
	case err != nil:
		return outcome{}, false, err
	case !ok:
		return outcome{}, false, nil
	case a.State == store.ApprovalExpired:
		return s.heldPlanOutcome(ctx, r, plan, &planRefusal{Code: agent.RefusedExpired, Reason: "nobody approved the plan before its deadline"}), true, nil
	case a.Decision == store.Deny:
		return s.heldPlanOutcome(ctx, r, plan, nil), true, nil
	}
	return s.classify(ctx, r, ag.Run(ctx, approvedPlanTurn)), true, nil
}

// heldPlanOutcome is how a held plan's turn ends while it is not
// approved: waiting for the approval, blocked (nobody can approve it, it
// expired, a person declined it), or failed.
func (s *Service) heldPlanOutcome(ctx context.Context, r *taskrun.Run, plan string, err error) outcome {
	res := agent.Result{FinalAnswer: plan}
	var pr *planRefusal
	switch {
	case errors.As(err, new(*suspendError)):
		res.Outcome, res.Err = agent.OutcomeSuspended, err
		return s.classify(ctx, r, res)
	case errors.As(err, &pr):
		return outcome{state: store.StateBlocked, code: pr.Code, result: res}
	case err != nil:
		res.Outcome, res.Err = agent.OutcomeFailed, err
		return s.classify(ctx, r, res)
	}
	// Declined: the plan stays in the conversation; a message continues
	// the task from it (the approver's note is in approval_decided).
	return outcome{state: store.StateBlocked, code: agent.RefusedByPerson, result: res}
}
