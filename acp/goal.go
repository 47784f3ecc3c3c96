package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/session"
)

// goalTurn runs a prompt in goal mode: the session's goal controller
// (runner/session's, the same as `reasonix run --goal`) keeps going turn
// after turn until the goal is complete or blocked. The goal's own turns
// stream to the editor but stay out of the session's conversation, which
// records the prompt and the goal's final answer, so a later prompt, load
// or resume sees one exchange.
func (l *live) goalTurn(ctx context.Context, sess *session.Session, text, typed, pristine string) (any, *sdk.RequestError) {
	l.inGoal.Store(true)
	defer l.inGoal.Store(false)
	g, err := sess.Goal(session.GoalConfig{PlanApprover: goals.PlanApproverFunc(l.reviewPlan), OnTurn: func(ag *agent.Agent) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.goalAgent = ag
		if ag != nil {
			for _, s := range l.pendingSteer {
				ag.Steer(s)
			}
			l.pendingSteer = nil
		}
	}})
	if err != nil {
		return nil, internalError(err)
	}
	// A goal that asked a question the person chose to answer later
	// takes this prompt as the answer.
	l.mu.Lock()
	waiting := l.waitingGoal
	l.waitingGoal = nil
	l.mu.Unlock()
	var res goals.Result
	if waiting != nil {
		l.recordAnswer(waiting.Question, typed)
		res, err = g.Resume(ctx, waiting, text)
	} else {
		// The Coordinator routes the goal's opening turn, as for a task.
		goal := goals.Goal{Objective: text}
		sess.CoordinateGoal(ctx, &goal, pristine)
		res, err = g.Run(ctx, goal)
	}
	for err == nil && asksPerson(res) {
		answer, ok := l.askGoal(ctx, res.Question)
		if !ok {
			break
		}
		res, err = g.Resume(ctx, res.State, answer)
	}
	l.mu.Lock()
	l.goalAgent, l.pendingSteer = nil, nil
	if err == nil && asksPerson(res) && ctx.Err() == nil {
		l.waitingGoal = res.State
	}
	l.mu.Unlock()
	if err != nil {
		return nil, internalError(err)
	}
	answer := res.FinalAnswer
	if res.Question != "" {
		l.a.notify(l.id, sdk.UpdateAgentMessageText("\n\n"+res.Question))
		answer += "\n\n" + res.Question
	}
	l.fold(sess, typed, answer)
	switch res.Outcome {
	case goals.StatusComplete, goals.StatusBlocked, goals.StatusQuestion, goals.StatusPaused:
		// As for a plain turn: the last answer's finish reason says
		// whether it hit the output limit or was refused.
		return map[string]any{"stopReason": finishStop(res.FinishReason)}, nil
	case goals.StatusBudget:
		return map[string]any{"stopReason": "max_turn_requests"}, nil
	case goals.StatusCancelled:
		return map[string]any{"stopReason": "cancelled"}, nil
	}
	msg := "the goal failed"
	if res.Err != nil {
		msg += ": " + res.Err.Error()
	} else if res.Reason != "" {
		msg += ": " + res.Reason
	}
	return nil, &sdk.RequestError{Code: -32603, Message: msg}
}

// asksPerson reports whether a goal stopped on a question for a person:
// its own question, or how to go on after the blocked audit stopped it.
func asksPerson(res goals.Result) bool {
	return res.Question != "" && res.State != nil &&
		(res.Outcome == goals.StatusQuestion || res.Outcome == goals.StatusBlocked)
}

// fold adds a goal's prompt and final answer to the session's
// conversation and transcript.
func (l *live) fold(sess *session.Session, prompt, answer string) {
	add := []agent.Message{{Role: agent.RoleUser, Content: prompt}, {Role: agent.RoleAssistant, Content: answer}}
	for i := range add {
		l.tr.Observe(agent.Event{Type: agent.EventMessage, Message: &add[i]})
	}
	l.extend(sess, add)
}

// extend adds messages to the session's conversation (the transcript
// already has them) by rebuilding its agent with them.
func (l *live) extend(sess *session.Session, add []agent.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cfg := sess.Agent
	cfg.History = append(l.agent.Messages(), add...)
	cfg.Gate = l.modeGate(cfg.Gate)
	if ag, err := agent.New(cfg); err == nil {
		l.agent = ag
	} else {
		l.a.cfg.Logger.Warn("acp: keeping the turn's answer", "session", l.id, "err", err)
	}
}
