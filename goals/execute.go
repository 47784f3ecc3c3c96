package goals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"reasonix/agent"
)

const (
	startInstruction    = "Start working on the goal."
	continueInstruction = "Continue working toward the goal from where you left off; do not redo work that is already done. " +
		"If everything is done and verified, call update_goal with action \"complete\"."
)

// execute issues executing turns until the goal stops.
func (s *session) execute(ctx context.Context, message string) (Result, error) {
	st := s.st
	st.Phase = PhaseExecuting
	var hostTools []agent.Tool
	if s.cfg.Host != nil {
		for _, t := range s.cfg.Host.Tools() {
			if !s.cfg.NoDelegation || !IsDelegationTool(t.Name()) {
				hostTools = append(hostTools, t)
			}
		}
	}
	reg, err := registry(s.cfg.Agent.Tools, nil, append(s.goalTools(), hostTools...)...)
	if err != nil {
		return s.result(), err
	}
	gate := s.cfg.Agent.Gate
	if st.PlanApproved && s.cfg.Policy != nil {
		gate = ApprovedPlanGate(s.cfg.Policy, s.cfg.Workdir, gate)
	}
	gate = goalToolsGate(gate)
	for st.Status == StatusActive {
		if ctx.Err() != nil {
			s.err = context.Cause(ctx)
			s.stop(StatusCancelled, "cancelled")
		} else if spent := s.budgetSpent(); spent != "" {
			s.stop(StatusBudget, spent)
		} else {
			instruction := continueInstruction
			if st.Turns == 0 || len(st.History) == 0 {
				instruction = startInstruction
			}
			if message != "" {
				instruction = ""
			}
			res, err := s.runTurn(ctx, s.input(message, instruction), reg, gate, message != "")
			if err != nil {
				return s.result(), err
			}
			message = ""
			s.judge(ctx, res)
			if st.Status == StatusActive {
				s.warnBudget()
			}
		}
		if err := s.save(ctx); err != nil {
			return s.result(), err
		}
		s.emitUpdate()
	}
	return s.result(), nil
}

// judge decides after a turn whether the goal stops. The model's own report
// comes first, then cancellation and failure, then budgets, then the
// blocked audit and the stall detector.
func (s *session) judge(ctx context.Context, res agent.Result) {
	st := s.st
	if r := s.report; r != nil {
		switch r.action {
		case actionComplete:
			st.Summary = r.text
			s.stop(StatusComplete, "")
		case actionBlocked:
			st.Blocked = append(st.Blocked, BlockedReport{Turn: st.Turns, Text: r.text, Normalized: normalizeBlocked(r.text), Audit: st.AuditEpoch})
			if r.question != "" {
				st.Question = r.question
				s.stop(StatusQuestion, r.text)
			} else {
				s.stop(StatusBlocked, r.text)
			}
		case actionPause:
			s.stop(StatusPaused, "paused by the requester")
		}
		return
	}
	switch res.Outcome {
	case agent.OutcomeSuspended:
		s.err = res.Err
		st.Suspended = true
		s.stop(StatusSuspended, "waiting for a person's approval")
		return
	case agent.OutcomeInterrupted:
		if ctx.Err() == nil && errors.Is(res.Err, errWallClock) {
			s.stop(StatusBudget, s.budgetSpent())
			if st.Reason == "" {
				st.Reason = "wall-clock budget spent"
			}
			return
		}
		s.err = res.Err
		s.stop(StatusCancelled, "cancelled")
		return
	case agent.OutcomeFailed:
		s.err = res.Err
		s.stop(StatusFailed, agent.Reason(res.Err))
		return
	}
	if spent := s.budgetSpent(); spent != "" {
		s.stop(StatusBudget, spent)
		return
	}
	if res.Outcome == agent.OutcomeBlocked && s.auditBlocked(res) {
		return
	}
	s.checkStall(ctx)
}

// warnBudget emits one EventBudgetWarning per budget and slice whose
// spending crossed Budget.Warn of it; a spent budget stops the goal
// instead (budgetSpent).
func (s *session) warnBudget() {
	b, sl := s.cfg.Budget, &s.st.Slice
	if b.Warn <= 0 || b.Warn >= 1 {
		return
	}
	for _, c := range []struct {
		budget       string
		limit, spent float64
	}{
		{"cost", b.USD, sl.Cost},
		{"tokens", float64(b.Tokens), float64(sl.Tokens)},
		{"turns", float64(b.Turns), float64(sl.Turns)},
	} {
		if c.limit <= 0 || c.spent < b.Warn*c.limit || c.spent >= c.limit || slices.Contains(sl.Warned, c.budget) {
			continue
		}
		sl.Warned = append(sl.Warned, c.budget)
		s.emit(agent.Event{Type: EventBudgetWarning, Data: BudgetWarning{Budget: c.budget, Limit: c.limit, Spent: c.spent, Share: b.Warn, Scope: "goal_slice"}})
	}
}

// auditBlocked records a turn that ended with a refused call and stops the
// goal when the same blocked state has recurred BlockedRepeats times in the
// current audit epoch.
func (s *session) auditBlocked(res agent.Result) bool {
	st := s.st
	text := strings.TrimSpace(res.FinalAnswer)
	if text == "" {
		text = strings.Join(s.refusals, "; ")
	}
	norm := normalizeBlocked(text)
	st.Blocked = append(st.Blocked, BlockedReport{Turn: st.Turns, Text: text, Normalized: norm, Audit: st.AuditEpoch})
	same := 0
	for _, b := range st.Blocked {
		if b.Audit == st.AuditEpoch && b.Normalized == norm {
			same++
		}
	}
	if same >= s.cfg.BlockedRepeats {
		s.stop(StatusBlocked, text)
		return true
	}
	st.Notices = append(st.Notices, fmt.Sprintf("A call this turn needed was refused (%s). Find another way that the permissions allow; "+
		"if there is none, call update_goal with action \"blocked\" and say what a person must do.", strings.Join(s.refusals, "; ")))
	return false
}

// checkStall counts turns without novel progress (zero-evidence turns:
// nothing new read, run or changed, no plan item completed, tool calls that
// only failed). After StallTurns of them the goal changes strategy (seed
// §3.8: stalls redirect, never pause a goal): a redirect prompt naming a
// different approach each time, a fresh plan from the planner where one is
// configured, and a new audit epoch. Redirects are bounded: after
// MaxRedirects in a row with no progress between them the slice ends as a
// budget stop, which a resume continues with a fresh slice. A goal blocks
// only when the model asks a person a question (update_goal blocked).
func (s *session) checkStall(ctx context.Context) {
	st := s.st
	if s.novel {
		st.StalledTurns, st.RedirectsInRow = 0, 0
		return
	}
	st.StalledTurns++
	if st.StalledTurns < s.cfg.StallTurns {
		return
	}
	if st.RedirectsInRow >= s.cfg.MaxRedirects {
		s.stop(StatusBudget, fmt.Sprintf("no progress after %d strategy redirects", st.RedirectsInRow))
		return
	}
	s.redirect(ctx, fmt.Sprintf("The last %d turns produced no new results, changes or completed plan items.", st.StalledTurns))
}

// redirectStrategies are the approaches a redirect turns to, in order, one
// per redirect, so a goal that stalls again is pointed somewhere new.
var redirectStrategies = []string{
	"Step back and reassess: write down what is known, what is actually missing, and choose an approach different from the one you have been repeating.",
	"Narrow the problem: find the smallest piece you can reproduce or verify on its own, settle it, then widen from there.",
	"Gather different evidence: read code, tests or documentation you have not read yet, or run a command you have not run, instead of repeating earlier calls.",
	"Work backwards from the goal's acceptance: run (or write) the check that would prove the goal done, and fix what it shows first.",
	"Change the granularity: split the remaining work into small todo_write items and finish them one at a time.",
	"Question your assumptions: which assumption, if it were wrong, would explain the lack of progress? Test it directly.",
}

// redirect changes the goal's strategy after a stall: the next turn opens
// with a different approach (and the planner's fresh plan when
// Config.Replan is set), and a new audit epoch starts so earlier blocked
// states do not count against the new approach.
func (s *session) redirect(ctx context.Context, why string) {
	st := s.st
	strategy := redirectStrategies[st.Redirects%len(redirectStrategies)]
	st.Redirects++
	st.RedirectsInRow++
	st.StalledTurns = 0
	st.AuditEpoch++
	notice := why + " Change strategy. " + strategy
	if s.cfg.Replan != nil {
		var tokens int
		var usd float64
		plan, err := s.cfg.Replan(ctx, st.Goal, why, func(e agent.Event) {
			if e.Type == agent.EventUsage && e.Usage != nil {
				tokens += e.Usage.Prompt + e.Usage.Completion
				usd += priceEvent(s.cfg.Price, e)
			}
		})
		// The planner's request is the goal's spend like a turn's.
		st.Tokens, st.Slice.Tokens = st.Tokens+tokens, st.Slice.Tokens+tokens
		st.Cost, st.Slice.Cost = st.Cost+usd, st.Slice.Cost+usd
		if plan = strings.TrimSpace(plan); err == nil && plan != "" {
			notice += "\n\nA planner proposes this plan for the new approach; check its assumptions before you follow it:\n" + plan
		}
	}
	notice += " If the work is already done and verified, call update_goal with action \"complete\"; if only a person can " +
		"unblock the goal, call update_goal with action \"blocked\" and the question they must answer."
	st.Notices = append(st.Notices, notice)
	s.emit(agent.Event{Type: EventRedirect, Data: Redirect{Goal: st.Goal.ID, Count: st.Redirects, InRow: st.RedirectsInRow, Reason: why, Strategy: strategy}})
}

// goalToolsGate lets the goal tools through: they change only the
// controller's own state, and a goal that could not report its end would
// run until a budget stopped it. Every other call goes to inner (nil means
// agent.ReadOnlyGate, the harness default).
func goalToolsGate(inner agent.Gate) agent.Gate {
	if inner == nil {
		inner = agent.ReadOnlyGate
	}
	return agent.GateFunc(func(ctx context.Context, c agent.Call) (agent.Verdict, error) {
		switch c.Tool {
		case toolCreateGoal, toolGetGoal, toolUpdateGoal:
			return agent.Allow, nil
		}
		return inner.Authorize(ctx, c)
	})
}
