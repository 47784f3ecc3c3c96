package agent

// Outcome is how a run ended.
type Outcome string

// Run outcomes. Each but OutcomeSuspended maps to one exit code of
// `reasonix run`, which never suspends (nobody can approve).
const (
	OutcomeSucceeded   Outcome = "succeeded"   // the model gave a final answer and nothing it needed was refused
	OutcomeFailed      Outcome = "failed"      // the provider or the harness failed
	OutcomeBlocked     Outcome = "blocked"     // a call the task needed was refused
	OutcomeStepLimit   Outcome = "step_limit"  // the step budget ran out before a final answer
	OutcomeInterrupted Outcome = "interrupted" // the context was cancelled
	OutcomeSuspended   Outcome = "suspended"   // a call waits for something outside the process; see Agent.Continue
)
