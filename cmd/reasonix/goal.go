package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/session"
)

// goalTotals sums what a goal did across its turns and sub-agents, for the
// closing summary and --json. Sub-agents and parallel calls report at the
// same time, hence the lock.
type goalTotals struct {
	mu                        sync.Mutex
	steps, toolCalls, refused int
	usage                     agent.Usage
}

func (t *goalTotals) observe(e agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Type {
	case agent.EventUsage:
		t.usage = t.usage.Add(*e.Usage)
		t.steps++
	case agent.EventToolStarted:
		t.toolCalls++
	case agent.EventToolRefused:
		t.toolCalls++
		t.refused++
	}
}

// addTo returns res with the totals (a plain run's sub-agents') added to
// its steps, calls and tokens.
func (t *goalTotals) addTo(res agent.Result) agent.Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Steps += t.steps
	res.ToolCalls += t.toolCalls
	res.RefusedCalls += t.refused
	res.Usage = res.Usage.Add(t.usage)
	return res
}

// runGoal drives task as a goal: continuation turns until the goal is
// complete, blocked, out of budget or interrupted, with fleets of
// sub-agents available through the task and fleet tools.
// noDelegation runs the control arm of --ablate subagent.
func runGoal(ctx context.Context, s *runSetup, pristine, task string, totals *goalTotals, noDelegation bool, stderr io.Writer) (goals.Result, error) {
	childObserver := agent.Observers(totals.observe, newProgress(stderr).childObserve, s.transcript.Observe, s.cost.observe)
	g, err := s.session.Goal(session.GoalConfig{
		Child: func(_ goals.ChildSpec, tools *agent.ToolRegistry) (*agent.ToolRegistry, agent.Observer, error) {
			return tools, childObserver, nil
		},
		NoDelegation: noDelegation,
	})
	if err != nil {
		return goals.Result{}, err
	}
	goal := goals.Goal{Objective: task}
	s.session.CoordinateGoal(ctx, &goal, pristine)
	return g.Run(ctx, goal)
}

// goalJSON is the --json result of a goal run: the run fields plus the
// goal's status and the delegation counters.
type goalJSON struct {
	jsonResult
	Reason   string `json:"reason,omitempty"`
	Question string `json:"question,omitempty"`
}

// ablateSubagent is --ablate's one value (seed §3.17).
const ablateSubagent = "subagent"

func goalResultJSON(res goals.Result, totals *goalTotals, d time.Duration, transcript string, cost costJSON) goalJSON {
	out := goalJSON{
		jsonResult: jsonResult{
			Status:       goalStatus(res.Outcome),
			Outcome:      string(res.Outcome),
			FinalAnswer:  res.FinalAnswer,
			Steps:        totals.steps,
			ToolCalls:    totals.toolCalls,
			RefusedCalls: totals.refused,
			Tokens:       totals.usage,
			DurationMS:   d.Milliseconds(),
			Transcript:   transcript,
			costJSON:     cost,
			Counters:     res.Counters,
		},
		Reason:   res.Reason,
		Question: res.Question,
	}
	if res.Err != nil {
		out.Error = errorSummary(res.Err)
	}
	return out
}

// goalStatus maps a goal outcome to the task-state vocabulary.
func goalStatus(o goals.Status) string { return string(session.GoalEnd(o).State) }

func (p *progress) childObserve(e agent.Event) {
	if e.Type == agent.EventToolStarted || e.Type == agent.EventToolRefused {
		p.observe(e)
	}
}

func goalSummary(w io.Writer, res goals.Result, totals *goalTotals, d time.Duration) {
	fmt.Fprintf(w, "reasonix: goal %s after %s, %s (%d refused), %d+%d tokens, %s\n",
		res.Outcome, plural(totals.steps, "model request"), plural(totals.toolCalls, "tool call"), totals.refused, totals.usage.Prompt, totals.usage.Completion, d.Round(time.Millisecond))
	if res.Reason != "" {
		fmt.Fprintf(w, "reasonix: reason: %s\n", res.Reason)
	}
	if res.Question != "" {
		fmt.Fprintf(w, "reasonix: question for you: %s\n", res.Question)
	}
}
