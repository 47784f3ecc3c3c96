package session

import (
	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/store"
)

// Exit codes of `reasonix run` and of the CLI commands that follow a task
// to its end (`tasks submit --wait`, `tasks watch`).
const (
	ExitSucceeded   = 0   // the task succeeded
	ExitFailed      = 1   // the task or the command failed
	ExitUsage       = 2   // bad usage or configuration
	ExitBlocked     = 3   // a call the task needed was refused, or the goal is blocked
	ExitBudget      = 4   // the step limit or a budget was reached
	ExitInterrupted = 130 // interrupted by a signal, or cancelled
)

// End is how a run ended, in the task vocabulary every surface shares: the
// task state, and for the ends that are not plain success a short code a
// script (or the chat relay) can match.
type End struct {
	State store.State
	Code  string
}

// The one table from how a run ended to the task's state. An agent run
// and a goal end in different words; both land in the same states, and
// ExitCode maps those to the process exit code.
var (
	agentEnds = map[agent.Outcome]End{
		agent.OutcomeSucceeded:   {store.StateSucceeded, ""},
		agent.OutcomeBlocked:     {store.StateBlocked, "refused"},
		agent.OutcomeStepLimit:   {store.StateBudgetExhausted, "step_limit"},
		agent.OutcomeSuspended:   {store.StateWaitingApproval, ""},
		agent.OutcomeInterrupted: {store.StateInterrupted, "interrupted"},
		agent.OutcomeFailed:      {store.StateFailed, ""},
	}
	goalEnds = map[goals.Status]End{
		goals.StatusComplete:  {store.StateSucceeded, ""},
		goals.StatusBlocked:   {store.StateBlocked, "goal_blocked"},
		goals.StatusQuestion:  {store.StateBlocked, "question"},
		goals.StatusPaused:    {store.StateBlocked, "paused"},
		goals.StatusBudget:    {store.StateBudgetExhausted, "goal_budget"},
		goals.StatusSuspended: {store.StateWaitingApproval, ""},
		goals.StatusCancelled: {store.StateInterrupted, "interrupted"},
		goals.StatusFailed:    {store.StateFailed, ""},
	}
	exitCodes = map[store.State]int{
		store.StateSucceeded:       ExitSucceeded,
		store.StateFailed:          ExitFailed,
		store.StateBlocked:         ExitBlocked,
		store.StateWaitingApproval: ExitBlocked, // a run that cannot wait is blocked
		store.StateBudgetExhausted: ExitBudget,
		store.StateInterrupted:     ExitInterrupted,
		store.StateCancelled:       ExitInterrupted,
	}
)

// AgentEnd is how an agent run's outcome lands; an unknown outcome fails.
func AgentEnd(o agent.Outcome) End {
	if e, ok := agentEnds[o]; ok {
		return e
	}
	return End{State: store.StateFailed}
}

// GoalEnd is how a goal's final status lands; an unknown status fails.
func GoalEnd(s goals.Status) End {
	if e, ok := goalEnds[s]; ok {
		return e
	}
	return End{State: store.StateFailed}
}

// ExitCode is the process exit code for a task that ended in state; a
// state that is not an end (queued, running) is ExitFailed.
func ExitCode(state store.State) int {
	if c, ok := exitCodes[state]; ok {
		return c
	}
	return ExitFailed
}
