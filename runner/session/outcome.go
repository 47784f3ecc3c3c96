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

// reasons say, for a person, what an end code means and what to do. The
// code stays for scripts; the reason is what the CLI, the API and a chat
// thread show.
var reasons = map[string]string{
	"refused":            "a call the task needed was refused by the permission rules; the task's log names the call and the rule, and an allow rule, a task grant or a looser posture would let it run",
	"unattended":         "the task needed a person's approval and nobody was there to approve it; a notify target on its schedule or webhook (where an approver can answer), an allow rule in [permissions] or a looser posture would let it run",
	"declined":           "a person declined what the task needed",
	"expired":            "nobody answered the approval request in time",
	"deny_rule":          "a deny rule forbids what the task needed",
	"step_limit":         "the step limit ([agent] max_steps) was reached before a final answer",
	"goal_blocked":       "the goal is blocked",
	"question":           "the goal asks the requester a question; answer it with a message to the task",
	"paused":             "the goal is paused; a message to the task continues it",
	"goal_budget":        "the goal spent its budget slice; resuming the task grants a fresh one",
	"tool_budget":        "the task used up its tool-call budget ([runner] max_tool_calls)",
	"token_budget":       "the task used up its token budget ([runner] max_tokens)",
	"cost_budget":        "the task reached its cost budget ([runner] max_cost_per_task); resume it for a fresh budget",
	"timeout":            "the task ran out of time ([runner] task_timeout)",
	"cancelled":          "the task was cancelled on request",
	"interrupted":        "the service stopped while the task ran; resume it to continue",
	"provider.rejected":  "the model provider rejected the request; check the API key in the variable api_key_env names, and the model name",
	"provider.transient": "the model provider kept failing (rate limits or server errors) after every retry; try again later",
	"context.exhausted":  "the conversation no longer fits the model's context window",
	"unclassified":       "the model provider failed in an unexpected way; the service log has the details under the reference",
	"workspace":          "the workspace could not be prepared (repository, base branch or setup command); the service log has the details under the reference",
	"workspace_commit":   "the task's changes could not be committed to its branch; the service log has the details under the reference",
	"workspace_tampered": "the task changed how its worktree is linked to the repository (its .git file, commondir, gitdir or config.worktree), which could have made the service run code it wrote; nothing of the worktree was committed and it was left for inspection",
	"setup":              "the task's session could not be assembled (model, tools or plugins); the service log has the details under the reference",
	"goal":               "the goal controller failed; the service log has the details under the reference",
	"store":              "the task's progress could not be saved; the service log has the details under the reference",
	"internal":           "Reasonix failed; quote the reference when reporting it",
	"plan_only":          "the task asked for a plan only, and no planner is configured ([agent] planner_model) to write one; nothing was executed",
}

// Reason explains an end code for a person; "" for success or an unknown
// code.
func Reason(code string) string { return reasons[code] }
