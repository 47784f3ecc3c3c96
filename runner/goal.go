package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// runGoal runs a goal task through the goal controller: the first run
// starts the goal, every later run (after an approval, an answer to its
// question, a restart) resumes the saved state with the messages that
// arrived meanwhile. history is the transcript with the journal's rules
// applied; inbox holds the messages taken for this run.
func (s *Service) runGoal(ctx context.Context, r *taskrun.Run, sess *session.Session, history []agent.Message, inbox []store.InboxMessage) (outcome, error) {
	task := r.Task()
	doc, err := s.loadGoalDoc(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	gstore := &goalStore{s: s, taskID: task.ID, base: doc.Counters, saved: len(doc.Children)}
	obs := sess.Agent.Observer
	ctl, err := sess.Goal(session.GoalConfig{
		Store:        gstore,
		BudgetUSD:    task.BudgetUSD,
		PlanApprover: &planBroker{s: s, task: task},
		// The control loop steers the turn in progress with messages that
		// arrive meanwhile; between turns they wait in the inbox.
		OnTurn: func(ag *agent.Agent) {
			r.SetAgent(ag)
		},
		FleetObserver: func(e agent.Event) {
			obs(e)
			if e.Type == goals.EventFleetUpdated {
				gstore.childrenChanged(ctx)
			}
		},
		Child:        r.Child(ctx),
		NoDelegation: task.Ablate == store.AblateSubagent,
	})
	if err != nil {
		return outcome{}, err
	}
	if err := ctl.Host.Restore(doc.Children); err != nil {
		return outcome{}, err
	}
	gstore.host = ctl.Host
	r.CountDelegation(ctl.Host, gstore.counters)
	defer func() { s.metrics.addDelegation(ctl.Host.Counters()) }()

	message := inboxText(inbox)
	var res goals.Result
	if doc.State == nil {
		g := goals.Goal{ID: task.ID, Objective: expandReferences(ctx, sess, task, task.Prompt), PlanFirst: task.PlanFirst}
		if message != "" {
			g.Context = "Messages from the requester after the task was submitted:\n" + message
		}
		if !task.PlanFirst {
			sess.CoordinateGoal(ctx, &g, task.Prompt)
		}
		res, err = ctl.Run(ctx, g)
		return s.classifyGoal(ctx, r, res, err, gstore), nil
	}
	st, err := goals.DecodeState(doc.State)
	if err != nil {
		return outcome{}, err
	}
	adoptTranscript(st, history)
	if st.Status == goals.StatusComplete {
		if message == "" {
			// The goal completed but its run ended before the task
			// recorded it (a crash): report it, there is nothing to do.
			res = goals.Result{Outcome: st.Status, State: st, FinalAnswer: lastAnswer(st.History)}
			return s.classifyGoal(ctx, r, res, nil, gstore), nil
		}
		// A message after completion reopens the goal: the requester's
		// turn may edit it or ask for more.
		st.Status = goals.StatusPaused
	}
	if st.PlanPending && message != "" {
		// The same plan is reviewed again first; the message must not be
		// lost on the way, so it waits in the next turn's notices.
		st.Notices = append(st.Notices, "Message from the requester while the plan waited for review:\n"+message)
		message = ""
	}
	res, err = ctl.Resume(ctx, st, message)
	return s.classifyGoal(ctx, r, res, err, gstore), nil
}

// inboxText joins the requester's messages into one turn.
func inboxText(inbox []store.InboxMessage) string {
	texts := make([]string, 0, len(inbox))
	for _, m := range inbox {
		texts = append(texts, m.Text)
	}
	return strings.Join(texts, "\n\n")
}

// adoptTranscript makes the transcript the goal's conversation when it is
// ahead of the saved state. The transcript is persisted message by message,
// the state only after each turn, so a run that stopped mid-turn (a crash)
// left that turn's messages in the transcript only (and the journal's rules
// may have answered its calls). The turn is then continued, not started
// again, so the calls it already ran are not repeated.
func adoptTranscript(st *goals.State, transcript []agent.Message) {
	if len(transcript) <= len(st.History) {
		return
	}
	same := func(a, b agent.Message) bool {
		return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && len(a.ToolCalls) == len(b.ToolCalls)
	}
	if !slices.EqualFunc(st.History, transcript[:len(st.History)], same) {
		return // not this goal's conversation; keep the state's
	}
	st.History = transcript
	st.Suspended = true
}

// lastAnswer is the last assistant text of a conversation.
func lastAnswer(h []agent.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == agent.RoleAssistant && h[i].Content != "" {
			return h[i].Content
		}
	}
	return ""
}

// goalEnd is how a goal stands when its run ends: the final report's
// "goal" entry.
type goalEnd struct {
	ID       string         `json:"id"`
	Status   goals.Status   `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	Question string         `json:"question,omitempty"`
	Summary  string         `json:"summary,omitempty"`
	Turns    int            `json:"turns"`
	Tokens   int            `json:"tokens"`
	Cost     float64        `json:"cost"` // USD of the goal's priced calls, over all its runs
	Counters goals.Counters `json:"counters"`
}

// summary is the task result's summary for the goal, "" to use the final
// answer's: the completion summary, the question, or why it stopped.
func (g *goalEnd) summary() string {
	switch {
	case g == nil:
		return ""
	case g.Question != "":
		return truncate("Question: "+g.Question, 500)
	case g.Status == goals.StatusComplete:
		return truncate(g.Summary, 500)
	case g.Status == goals.StatusBlocked || g.Status == goals.StatusPaused || g.Status == goals.StatusBudget:
		return truncate(g.Reason, 500)
	}
	return ""
}

// blockedReason is the goal's own words for why it stopped short, "" when
// there are none.
func (g *goalEnd) blockedReason() string {
	if g == nil || g.Status == goals.StatusComplete {
		return ""
	}
	if g.Question != "" {
		return "the goal asks: " + g.Question
	}
	return g.Reason
}

// classifyGoal maps how a goal ended onto the task's state and result.
func (s *Service) classifyGoal(ctx context.Context, r *taskrun.Run, res goals.Result, err error, gstore *goalStore) outcome {
	o := outcome{result: agent.Result{FinalAnswer: res.FinalAnswer, Err: res.Err}}
	if st := res.State; st != nil {
		o.goal = &goalEnd{ID: st.Goal.ID, Status: st.Status, Reason: st.Reason, Question: st.Question, Summary: st.Summary,
			Turns: st.Turns, Tokens: st.Tokens, Cost: st.Cost, Counters: gstore.counters()}
	}
	if err != nil {
		var pr *planRefusal
		switch {
		case errors.As(err, &pr):
			o.state, o.code = store.StateBlocked, pr.Code
			if o.goal != nil {
				o.goal.Status, o.goal.Reason = goals.StatusBlocked, pr.Reason
			}
		case ctx.Err() != nil:
			so := s.stopped(ctx)
			so.result, so.goal = o.result, o.goal
			return so
		default:
			o.state, o.code, o.ref = store.StateFailed, "goal", newRef()
			s.log.Error("runner: goal failed", "task", r.Task().ID, "ref", o.ref, "err", err)
		}
		return o
	}
	end := session.GoalEnd(res.Outcome)
	o.state, o.code = end.State, end.Code
	switch end.State {
	case store.StateWaitingApproval:
		o.approve = s.approvalDeadline(res.Err)
	case store.StateInterrupted:
		so := s.stopped(ctx)
		so.result, so.goal = o.result, o.goal
		return so
	case store.StateFailed:
		o.code, o.ref = agent.Reason(res.Err), newRef()
		s.log.Error("runner: goal failed", "task", r.Task().ID, "ref", o.ref, "err", res.Err)
	}
	return o
}

// loadGoalDoc reads the task's goal document; the zero document when the
// goal has not started.
func (s *Service) loadGoalDoc(ctx context.Context, taskID string) (goalDoc, error) {
	raw, err := s.st.GoalState(ctx, taskID)
	if err != nil || raw == nil {
		return goalDoc{}, err
	}
	var doc goalDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return goalDoc{}, fmt.Errorf("runner: goal state of task %s: %w", taskID, err)
	}
	return doc, nil
}
