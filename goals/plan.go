package goals

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/policy"
)

// PlanProposal is a plan-first goal's plan, submitted for approval.
type PlanProposal struct {
	GoalID  string           `json:"goal_id"`
	Round   int              `json:"round"` // 1 for the first plan, +1 per rejection
	Plan    []agent.TodoItem `json:"plan"`
	Summary string           `json:"summary"` // the model's own account of the plan
}

// PlanDecision is a person's answer to a PlanProposal.
type PlanDecision struct {
	Approved bool
	// Feedback says what to change; it is given to the model when the plan
	// was rejected.
	Feedback string
}

// PlanApprover decides plans. It may block while a person is asked and must
// honour ctx; an error (other than ctx's) stops the goal with that error. The
// runner implements it with its approvals broker.
type PlanApprover interface {
	ReviewPlan(ctx context.Context, p PlanProposal) (PlanDecision, error)
}

// PlanApproverFunc adapts a function to PlanApprover.
type PlanApproverFunc func(ctx context.Context, p PlanProposal) (PlanDecision, error)

// ReviewPlan calls f.
func (f PlanApproverFunc) ReviewPlan(ctx context.Context, p PlanProposal) (PlanDecision, error) {
	return f(ctx, p)
}

const planInstruction = "Plan first: this is a read-only planning pass, and only read-only tools are available. " +
	"Investigate what you need, write the plan with todo_write (every item pending), and answer with a short account of the plan: " +
	"what you will change, how you will verify it, and what you assume. Do not start the work; the plan goes to a person for approval."

// plan runs planning turns until a plan is approved (stop false) or the
// goal stops (stop true).
func (s *session) plan(ctx context.Context, message string) (stop bool, err error) {
	st := s.st
	reg, err := registry(s.cfg.Agent.Tools, agent.IsReadOnly, s.goalTools()...)
	if err != nil {
		return true, err
	}
	for {
		if !st.PlanPending {
			if ctx.Err() != nil {
				s.err = context.Cause(ctx)
				s.stop(StatusCancelled, "cancelled")
				return true, s.finishTurn(ctx)
			}
			if spent := s.budgetSpent(); spent != "" {
				s.stop(StatusBudget, spent)
				return true, s.finishTurn(ctx)
			}
			res, err := s.runTurn(ctx, s.input(message, planInstruction), reg, s.cfg.Agent.Gate, message != "")
			if err != nil {
				return true, err
			}
			message = ""
			if res.Outcome == agent.OutcomeInterrupted || res.Outcome == agent.OutcomeFailed || s.report != nil {
				s.judge(ctx, res)
				return true, s.finishTurn(ctx)
			}
			st.PlanRounds++
			st.PlanPending = true
			if err := s.finishTurn(ctx); err != nil {
				return true, err
			}
		}
		p := PlanProposal{GoalID: st.Goal.ID, Round: st.PlanRounds, Plan: append([]agent.TodoItem(nil), st.Plan...), Summary: s.lastAnswer()}
		s.emit(agent.Event{Type: EventPlanApproval, Data: p})
		dec, err := s.cfg.Approver.ReviewPlan(ctx, p)
		if err != nil {
			if errors.Is(err, agent.ErrSuspend) {
				// The plan is with a person; PlanPending re-submits the
				// same plan when the goal is resumed.
				s.err = err
				s.stop(StatusSuspended, "waiting for the plan's approval")
				return true, s.finishTurn(ctx)
			}
			if ctx.Err() != nil {
				s.err = context.Cause(ctx)
				s.stop(StatusCancelled, "cancelled")
				return true, s.finishTurn(ctx)
			}
			return true, fmt.Errorf("goals: plan review of goal %s: %w", st.Goal.ID, err)
		}
		st.PlanPending = false
		if dec.Approved {
			st.PlanApproved = true
			st.Phase = PhaseExecuting
			st.Revision++
			st.Notices = append(st.Notices, "Your plan was approved. Carry it out now, keeping the plan up to date with todo_write.")
			return false, s.finishTurn(ctx)
		}
		if st.PlanRounds >= s.cfg.MaxPlanRounds {
			s.stop(StatusBlocked, fmt.Sprintf("plan rejected %d times", st.PlanRounds))
			st.Question = "The plan was rejected " + fmt.Sprint(st.PlanRounds) + " times. What should the plan do differently? Latest feedback: " + dec.Feedback
			return true, s.finishTurn(ctx)
		}
		fb := strings.TrimSpace(dec.Feedback)
		if fb == "" {
			fb = "(no feedback given)"
		}
		st.Notices = append(st.Notices, "Your plan was rejected. Feedback from the reviewer: "+fb+"\nRevise the plan accordingly.")
		if err := s.finishTurn(ctx); err != nil {
			return true, err
		}
	}
}

// finishTurn saves the state and announces it.
func (s *session) finishTurn(ctx context.Context) error {
	err := s.save(ctx)
	s.emitUpdate()
	return err
}

// lastAnswer is the last assistant text of the conversation, which survives
// a restart between planning and review.
func (s *session) lastAnswer() string {
	h := s.st.History
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agent.RoleAssistant && h[i].Content != "" {
			return h[i].Content
		}
	}
	return ""
}

// ApprovedPlanGate returns the gate of the approved-plan window (seed §3.7):
// a call the policy would ask about only because of the writer fallback is
// allowed; everything else — explicit ask and deny rules, nested shell
// execution, read-only calls — is decided by inner (nil means
// agent.ReadOnlyGate). Pass the same policy inner was built from.
func ApprovedPlanGate(p *policy.Policy, workdir string, inner agent.Gate) agent.Gate {
	if inner == nil {
		inner = agent.ReadOnlyGate
	}
	return agent.GateFunc(func(ctx context.Context, c agent.Call) (agent.Verdict, error) {
		ev := p.Evaluate(policy.Query{Tool: c.Tool, ReadOnly: c.ReadOnly, Args: c.Args, Workdir: workdir})
		if ev.Decision == policy.Ask && ev.Rule == "" && !ev.HumanOnly {
			return agent.Allow, nil
		}
		return inner.Authorize(ctx, c)
	})
}
