package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/store"
)

// planTool is the tool name of a plan's approval record: approvers see a
// plan, not a call, but decide it through the same broker and API.
const planTool = "plan"

// planBroker is the goals.PlanApprover of a plan-first task. Like the call
// broker it never blocks: a plan gets a durable approval record and the goal
// suspends (the worker parks the job); when the goal resumes it submits the
// same plan again and the broker answers from the decision.
type planBroker struct {
	s    *Service
	task store.Task
}

var _ goals.PlanApprover = (*planBroker)(nil)

// planRefusal stops a plan-first goal whose plan nobody decided: nobody can
// be asked (unattended) or nobody answered in time (expired). The task ends
// blocked with Code; re-planning would only spend tokens on a plan that
// nobody will read either.
type planRefusal struct {
	Code   string // agent.RefusedUnattended or agent.RefusedExpired
	Reason string
}

func (e *planRefusal) Error() string { return "runner: plan refused: " + e.Reason }

// planHash binds a decision to the plan's content: its items and summary.
func planHash(p goals.PlanProposal) string {
	raw, _ := json.Marshal(struct {
		Plan    []agent.TodoItem `json:"plan"`
		Summary string           `json:"summary"`
	}{p.Plan, p.Summary})
	sum := sha256.Sum256(append([]byte(planTool+"\x00"), raw...))
	return hex.EncodeToString(sum[:])
}

// planPreview renders the plan as an approver reads it.
func planPreview(p goals.PlanProposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan (round %d):\n", p.Round)
	for i, it := range p.Plan {
		fmt.Fprintf(&b, "%d. %s\n", i+1, it.Content)
	}
	if s := strings.TrimSpace(p.Summary); s != "" {
		b.WriteString("\n" + s + "\n")
	}
	return agent.BoundResult(b.String(), maxPreview)
}

// ReviewPlan answers from a decision on this exact plan, or records an
// approval request and suspends the goal.
func (b *planBroker) ReviewPlan(ctx context.Context, p goals.PlanProposal) (goals.PlanDecision, error) {
	s, hash := b.s, planHash(p)
	a, ok, err := s.decided(ctx, b.task.ID, hash)
	if err != nil {
		return goals.PlanDecision{}, err
	}
	if ok {
		switch {
		case a.State == store.ApprovalExpired:
			return goals.PlanDecision{}, &planRefusal{Code: agent.RefusedExpired, Reason: "nobody approved the plan before its deadline"}
		case a.Decision == store.Deny:
			return goals.PlanDecision{Feedback: a.Note}, nil
		default:
			return goals.PlanDecision{Approved: true}, nil
		}
	}
	if !attended(b.task) {
		s.metrics.approvals.WithLabelValues("unattended").Inc()
		return goals.PlanDecision{}, &planRefusal{Code: agent.RefusedUnattended, Reason: "nobody can approve the plan"}
	}
	instructors, err := s.instructors(ctx, b.task)
	if err != nil {
		return goals.PlanDecision{}, err
	}
	expires, none := s.deadlineOf(b.task)
	a, err = s.st.CreateApproval(ctx, store.NewApproval{
		TaskID:      b.task.ID,
		Instructors: instructors,
		Tool:        planTool,
		Subject:     truncate(strings.TrimSpace(p.Summary), maxPreview),
		CallHash:    hash,
		Preview:     planPreview(p),
		Requester:   b.task.Requester,
		Approvers:   b.task.Approvers,
		ExpiresAt:   expires,
		NoDeadline:  none,
	})
	if err != nil {
		return goals.PlanDecision{}, err
	}
	s.metrics.approvals.WithLabelValues("requested").Inc()
	payload := approvalPayload(a, "plan-first task: the plan needs approval before anything changes")
	delete(payload, "always_scope") // a plan is approved once
	s.emitLogged(ctx, b.task.ID, "approval_requested", payload)
	return goals.PlanDecision{}, &suspendError{approval: a}
}
