package session

import (
	"testing"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/store"
)

// The exit codes are a contract (docs/SPEC.md): pin them per outcome.
func TestOutcomesMapToStatesAndExitCodes(t *testing.T) {
	for o, want := range map[agent.Outcome]int{
		agent.OutcomeSucceeded: 0, agent.OutcomeFailed: 1, agent.OutcomeBlocked: 3,
		agent.OutcomeStepLimit: 4, agent.OutcomeInterrupted: 130, "bogus": 1,
	} {
		if got := ExitCode(AgentEnd(o).State); got != want {
			t.Errorf("agent outcome %s: exit %d, want %d", o, got, want)
		}
	}
	for s, want := range map[goals.Status]int{
		goals.StatusComplete: 0, goals.StatusFailed: 1, goals.StatusBlocked: 3, goals.StatusQuestion: 3,
		goals.StatusPaused: 3, goals.StatusSuspended: 3, goals.StatusBudget: 4, goals.StatusCancelled: 130,
	} {
		if got := ExitCode(GoalEnd(s).State); got != want {
			t.Errorf("goal status %s: exit %d, want %d", s, got, want)
		}
	}
	if ExitCode(store.StateCancelled) != 130 || ExitCode(store.StateRunning) != 1 {
		t.Error("task states: cancelled must exit 130, a state that is not an end 1")
	}
	if e := GoalEnd(goals.StatusQuestion); e.State != store.StateBlocked || e.Code != "question" {
		t.Errorf("question: %+v", e)
	}
}

// Every code the runner records as a task's end has a reason for a person.
func TestEveryEndCodeHasAReason(t *testing.T) {
	codes := []string{"tool_budget", "token_budget", "timeout", "cancelled", "interrupted", "provider.rejected",
		"provider.transient", "context.exhausted", "unclassified", "workspace", "workspace_commit", "setup", "goal",
		"store", "internal", "unattended", "declined", "expired", "deny_rule"}
	for _, e := range agentEnds {
		codes = append(codes, e.Code)
	}
	for _, e := range goalEnds {
		codes = append(codes, e.Code)
	}
	for _, c := range codes {
		if c != "" && Reason(c) == "" {
			t.Errorf("end code %q has no reason", c)
		}
	}
}
