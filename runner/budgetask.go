package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// Budgets that ask. A task with a notify target that spends its cost,
// token, tool-call, step or goal budget does not end there: it parks, like
// a call waiting for approval (no worker held, durable across restarts,
// any node resumes it), behind a "budget card" — an approval record of
// tool budgetTool, decided through Decide with the same authority checks
// as any call's. Its choices:
//
//   - allow_once: one more run with a fresh slice of the same budget (the
//     per-run budgets count afresh; a goal gets a fresh slice, as Resume);
//   - deny: stop, as budget_exhausted (so does expiry, nobody answering);
//   - stop_publish: stop, as budget_exhausted, and publish the branch
//     where the workspace publishes ([workspaces.publish]).
//
// The run that wakes after the decision reads it before it starts
// (budgetAnswer); while the card is pending, a woken job snoozes again
// (budgetWait). A task without a notify target ends as budget_exhausted
// at once, as before.

// budgetTool is the tool name of a budget card's approval record.
const budgetTool = "budget"

// budgetAsks reports whether a run that ended with code asks for more
// budget rather than ending: the cost, token, tool-call, step and goal
// budgets. The time budget (task_timeout) does not ask: it bounds how long
// a worker may be held, not what the task may spend.
func budgetAsks(code string) bool {
	switch code {
	case "cost_budget", "token_budget", "tool_budget", "step_limit", "goal_budget":
		return true
	}
	return false
}

// budgetHash is the call hash of task id's budget cards: one per task, so
// ApprovalsForCall lists them newest first.
func budgetHash(taskID string) string {
	sum := sha256.Sum256([]byte(budgetTool + "\x00" + taskID))
	return hex.EncodeToString(sum[:])
}

// budgetChoice refuses a decision that does not answer approval a: a
// budget card takes allow_once, deny and stop_publish; stop_publish
// answers nothing else.
func budgetChoice(a store.Approval, d store.Decision) error {
	if a.Tool == budgetTool {
		switch d {
		case store.AllowOnce, store.Deny, store.StopPublish:
			return nil
		}
		return invalidf("approval %s is a budget card: its choices are allow_once (+ the same budget), deny (stop) and stop_publish (stop and publish what exists)", a.ID)
	}
	if d == store.StopPublish {
		return invalidf("stop_publish answers a budget card; approval %s is a call's", a.ID)
	}
	return nil
}

// BudgetOffer is what approval a's "+" choice gives when a is a budget
// card: the same budget again ("$0.5", "200000 tokens"), as the chat's
// button says it; "" for any other approval, or when the task cannot be
// read just now.
func (s *Service) BudgetOffer(ctx context.Context, a store.Approval) string {
	if a.Tool != budgetTool {
		return ""
	}
	t, err := s.st.Task(ctx, a.TaskID)
	if err != nil {
		return ""
	}
	return s.sameBudget(t, a.Subject)
}

// budgetCard is what the card shows an approver.
type budgetCard struct {
	Budget    string   // the same budget again, as the "+" button says it
	Spent     float64  // USD over the task's life
	Tokens    int      // prompt + completion over the task's life
	Done      int      // plan items completed
	Remaining []string // plan items not completed, in order
	LastStep  string   // the last tool call, bounded
}

// text is the card's body, stored as the approval's preview.
func (c budgetCard) text(reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Budget reached: %s.\nSpent: $%.4f, %d tokens.\n", reason, c.Spent, c.Tokens)
	if c.Done+len(c.Remaining) > 0 {
		fmt.Fprintf(&b, "Plan: %d done, %d remaining", c.Done, len(c.Remaining))
		if len(c.Remaining) > 0 {
			b.WriteString(" — next: " + truncate(c.Remaining[0], 200))
		}
		b.WriteString(".\n")
	}
	if c.LastStep != "" {
		b.WriteString("Last step: " + c.LastStep + "\n")
	}
	fmt.Fprintf(&b, "Continue with + %s, stop, or stop and publish what exists.", c.Budget)
	return agent.BoundResult(b.String(), maxPreview)
}

// sameBudget names the budget that ended the run, as one more of it.
func (s *Service) sameBudget(t store.Task, code string) string {
	usd := func(v float64) string { return "$" + strconv.FormatFloat(v, 'f', -1, 64) }
	switch code {
	case "cost_budget":
		return usd(s.set.Runner.MaxCostPerTask)
	case "token_budget":
		return strconv.Itoa(s.set.Runner.MaxTokens) + " tokens"
	case "tool_budget":
		return strconv.Itoa(s.set.Runner.MaxToolCalls) + " tool calls"
	case "goal_budget":
		if v := t.BudgetUSD; v > 0 {
			return usd(v)
		}
		if v := s.set.Agent.GoalBudgetUSD; v > 0 {
			return usd(v)
		}
		return "one goal slice"
	}
	return "one run"
}

// budgetCardOf gathers the card of task t, whose run ended with code
// having spent spent: the plan's progress from its latest plan_updated
// event, the last step from its latest tool_started event.
func (s *Service) budgetCardOf(ctx context.Context, t store.Task, code string, spent store.Result) budgetCard {
	c := budgetCard{Budget: s.sameBudget(t, code), Spent: spent.Cost, Tokens: spent.Tokens.Prompt + spent.Tokens.Completion}
	if evs, err := s.st.EventsOfType(ctx, t.ID, "plan_updated"); err == nil && len(evs) > 0 {
		var p struct {
			Plan []agent.TodoItem `json:"plan"`
		}
		if json.Unmarshal(evs[len(evs)-1].Payload, &p) == nil {
			for _, it := range p.Plan {
				if it.Status == "completed" {
					c.Done++
				} else {
					c.Remaining = append(c.Remaining, it.Content)
				}
			}
		}
	}
	if evs, err := s.st.EventsOfType(ctx, t.ID, "tool_started"); err == nil && len(evs) > 0 {
		var p struct {
			Tool string `json:"tool"`
			Args string `json:"args"`
		}
		if json.Unmarshal(evs[len(evs)-1].Payload, &p) == nil && p.Tool != "" {
			c.LastStep = truncate(strings.TrimSpace(p.Tool+" "+firstLineOf(p.Args)), 200)
		}
	}
	return c
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// parkOnBudget records a budget card for run r, which ended with outcome
// o, when its task has a notify target; ok is false when the task ends as
// before (no target, a budget that does not ask, or the card could not be
// recorded: then it ends rather than waits for a card nobody sees).
func (s *Service) parkOnBudget(ctx context.Context, r *taskrun.Run, o outcome) (store.Approval, bool) {
	t := r.Task()
	if o.state != store.StateBudgetExhausted || o.budgetStopped || !budgetAsks(o.code) || len(t.Notify) == 0 {
		return store.Approval{}, false
	}
	spent := r.SpendSoFar(ctx)
	card := s.budgetCardOf(ctx, t, o.code, spent)
	instructors, err := s.instructors(ctx, t)
	if err != nil {
		s.log.Warn("runner: the budget card could not be recorded; the task ends", "task", t.ID, "err", err)
		return store.Approval{}, false
	}
	reason := session.Reason(o.code)
	expires, none := s.deadlineOf(t)
	a, err := s.st.CreateApproval(ctx, store.NewApproval{
		TaskID:      t.ID,
		Instructors: instructors,
		Tool:        budgetTool,
		Subject:     o.code,
		CallHash:    budgetHash(t.ID),
		Preview:     s.redact.String(card.text(reason)),
		Requester:   t.Requester,
		Approvers:   t.Approvers,
		ExpiresAt:   expires,
		NoDeadline:  none,
	})
	if err != nil {
		s.log.Warn("runner: the budget card could not be recorded; the task ends", "task", t.ID, "err", err)
		return store.Approval{}, false
	}
	s.metrics.approvals.WithLabelValues("requested").Inc()
	payload := approvalPayload(a, reason)
	delete(payload, "always_scope") // more budget is granted once
	payload["kind"], payload["budget"], payload["spent"], payload["tokens"] = "budget", card.Budget, card.Spent, card.Tokens
	payload["done"], payload["remaining"], payload["last_step"] = card.Done, len(card.Remaining), s.redact.String(card.LastStep)
	s.announce(t.ID) // the run's buffered events go first
	s.emitLogged(ctx, t.ID, "approval_requested", payload)
	return a, true
}

// budgetWait reports, for a task waiting for approval, how long its job
// should snooze again because its newest budget card is still pending:
// the job was woken by something else (a message, a sweep).
func (s *Service) budgetWait(ctx context.Context, t store.Task) (time.Duration, bool, error) {
	list, err := s.st.ApprovalsForCall(ctx, t.ID, budgetHash(t.ID))
	if err != nil || len(list) == 0 {
		return 0, false, err
	}
	a := list[0] // newest first
	if a.State != store.ApprovalPending {
		return 0, false, nil
	}
	return s.parkUntil(a.ExpiresAt, s.cfg.SweepInterval+time.Second), true, nil
}

// budgetAnswer reads, before a run starts, the decision on the task's
// newest budget card not acted on yet, and acts on it once: more budget
// lets the run go on (ok false); a stop, a stop-and-publish or expiry is
// the outcome that ends the task without a run (ok true).
func (s *Service) budgetAnswer(ctx context.Context, r *taskrun.Run) (outcome, bool, error) {
	id := r.Task().ID
	if firstRun(r.Task()) {
		return outcome{}, false, nil // a card is made by a run that ended (parkOnBudget)
	}
	list, err := s.st.ApprovalsForCall(ctx, id, budgetHash(id))
	if err != nil {
		return outcome{}, false, err
	}
	for _, a := range list { // newest first
		if !a.ConsumedAt.IsZero() || a.State == store.ApprovalPending {
			continue
		}
		used, err := s.st.ConsumeApproval(ctx, a.ID)
		if err != nil {
			return outcome{}, false, err
		}
		if !used {
			continue
		}
		if a.State == store.ApprovalAllowed {
			s.emitLogged(ctx, id, "budget_extended", map[string]any{"approval_id": a.ID, "by": a.DecidedBy, "code": a.Subject})
			return outcome{}, false, nil
		}
		code := a.Subject
		if !budgetAsks(code) {
			code = "cost_budget"
		}
		return outcome{state: store.StateBudgetExhausted, code: code, budgetStopped: true,
			publish: a.State == store.ApprovalDenied && a.Decision == store.StopPublish}, true, nil
	}
	return outcome{}, false, nil
}
