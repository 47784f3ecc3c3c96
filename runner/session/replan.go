package session

import (
	"context"
	"errors"

	"reasonix/agent"
	"reasonix/goals"
)

// plannerSystemPrompt is the planner's whole system prompt. It never
// changes, so the planner's prefix stays cache-stable across calls; only
// the small <planner-turn> block of each call differs (seed §3.5).
const plannerSystemPrompt = "You are the planner of a coding agent. You do not act; you write a short plan that " +
	"another model (the executor) carries out in the workspace. Each request carries a <planner-turn> block: the goal " +
	"and why a new plan is needed. Answer with a compact plan only: the objective in one line, 1 to 4 ordered steps, " +
	"the likely files or commands each step touches (mark guesses as candidates), and the one check that proves the " +
	"goal done. Prefer an approach different from one that has stopped making progress."

// replanner is goals.Config.Replan when [agent] planner_model names a
// model other than the executor's: one tool-less request to the planner,
// in a session of its own, whose usage is priced and logged with the
// task's and counted in the goal's budgets. nil without a planner.
func (s *Session) replanner() (func(context.Context, goals.Goal, string, agent.Observer) (string, error), error) {
	if !s.PlannerConfigured() {
		return nil, nil
	}
	m, err := s.plannerModel()
	if err != nil {
		return nil, err
	}
	observe := s.Agent.Observer
	return func(ctx context.Context, g goals.Goal, why string, goalObserve agent.Observer) (string, error) {
		a, err := agent.New(agent.Config{
			Provider: m.Provider, Model: m.Name, MaxTokens: m.MaxTokens, Effort: m.Effort,
			SystemPrompt: plannerSystemPrompt, MaxSteps: 1, ContextWindow: m.ContextWindow,
			// Only the cost reaches the task's log and the goal's budgets:
			// the plan itself goes to the executor's next turn, never into
			// the task's transcript.
			Observer: func(e agent.Event) {
				if e.Type != agent.EventUsage {
					return
				}
				if observe != nil {
					observe(e)
				}
				if goalObserve != nil {
					goalObserve(e)
				}
			},
		})
		if err != nil {
			return "", err
		}
		res := a.Run(ctx, "<planner-turn>\nGoal: "+g.Objective+"\nWhy a new plan: "+why+"\n</planner-turn>")
		if res.Err != nil {
			return "", res.Err
		}
		if res.Outcome != agent.OutcomeSucceeded {
			return "", errors.New("session: the planner did not finish")
		}
		return res.FinalAnswer, nil
	}, nil
}
