package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"reasonix/agent"
)

// Status is where a goal stands. Every status but StatusActive is a stop;
// all of them except StatusComplete can be resumed.
type Status string

// Goal statuses.
const (
	StatusActive    Status = "active"
	StatusComplete  Status = "complete"
	StatusBlocked   Status = "blocked"
	StatusQuestion  Status = "question" // waiting for the requester's answer
	StatusBudget    Status = "budget_exhausted"
	StatusPaused    Status = "paused"
	StatusCancelled Status = "cancelled"
	// StatusSuspended: a tool call or the plan waits for a person's
	// decision (the approvals broker returned agent.ErrSuspend). Resume
	// continues exactly there: the same call is asked about again.
	StatusSuspended Status = "suspended"
	StatusFailed    Status = "failed"
)

// Phase is the part of a goal's life a turn belongs to.
type Phase string

// Phases. Goals without PlanFirst start executing at once.
const (
	PhasePlanning  Phase = "planning"
	PhaseExecuting Phase = "executing"
)

// stateVersion is the layout of State; DecodeState refuses other versions.
const stateVersion = 1

// Slice counts the spending of the current budget slice. Resuming a goal
// stopped by a budget starts a fresh slice; the cumulative counters in State
// are never cleared.
type Slice struct {
	Turns  int           `json:"turns"`
	Tokens int           `json:"tokens"`
	Active time.Duration `json:"active"`
	Cost   float64       `json:"cost,omitempty"` // USD of the priced calls
	// Warned names the budgets ("cost", "tokens", "turns") this slice has
	// warned about, so each warns once per slice across runs.
	Warned []string `json:"warned,omitempty"`
}

// BlockedReport is one entry of a goal's blocked history.
type BlockedReport struct {
	Turn       int    `json:"turn"`
	Text       string `json:"text"`
	Normalized string `json:"normalized"`
	// Audit is the blocked-audit epoch the report belongs to; resuming a
	// goal with a message starts a new epoch, so older reports no longer count.
	Audit int `json:"audit"`
}

// State is everything a goal needs to continue after a restart. It is plain
// data, safe to marshal with encoding/json; the controller owns it while a
// Run or Resume is in progress and hands it back in the Result.
type State struct {
	Version  int    `json:"version"`
	Goal     Goal   `json:"goal"`
	Status   Status `json:"status"`
	Phase    Phase  `json:"phase"`
	Revision int    `json:"revision"`
	// Reason says why the goal stopped ("stalled", a blocked report, a
	// failure class); empty while active.
	Reason string `json:"reason,omitempty"`
	// Question is what the requester is asked when Status is
	// StatusQuestion, or when a stalled goal asks how to go on.
	Question string `json:"question,omitempty"`
	// Summary is the model's completion summary.
	Summary string `json:"summary,omitempty"`

	Turns  int           `json:"turns"`
	Tokens int           `json:"tokens"`
	Active time.Duration `json:"active"`
	// Cost is the USD of the goal's priced model calls, its sub-agents'
	// included, over every slice.
	Cost  float64 `json:"cost,omitempty"`
	Slice Slice   `json:"slice"`

	Blocked    []BlockedReport  `json:"blocked,omitempty"`
	AuditEpoch int              `json:"audit_epoch"`
	Plan       []agent.TodoItem `json:"plan,omitempty"`
	// PlanApproved opens the approved-plan window (Config.Policy).
	PlanApproved bool `json:"plan_approved,omitempty"`
	PlanRounds   int  `json:"plan_rounds,omitempty"`
	// PlanPending is set while a proposed plan waits for its decision, so a
	// restart re-submits it instead of planning again.
	PlanPending        bool `json:"plan_pending,omitempty"`
	RefusedCompletions int  `json:"refused_completions,omitempty"`

	// StalledTurns counts consecutive turns without novel progress; Nudged
	// is set once the reassessment nudge was sent.
	StalledTurns int  `json:"stalled_turns"`
	Nudged       bool `json:"nudged,omitempty"` // only in states saved before redirects; unused
	// Redirects counts the strategy redirects of the goal, RedirectsInRow
	// those since the last progress (bounded by Config.MaxRedirects).
	Redirects      int `json:"redirects,omitempty"`
	RedirectsInRow int `json:"redirects_in_row,omitempty"`
	// Seen holds fingerprints of tool results already observed, so exact
	// repeats of a call and its result are not mistaken for progress.
	Seen []string `json:"seen,omitempty"`
	// Notices are host messages for the next turn (a refused completion, a
	// nudge, plan feedback).
	Notices []string `json:"notices,omitempty"`

	// Suspended is set while a turn waits on a suspended tool call, so the
	// next turn continues the conversation instead of starting a new one.
	Suspended bool `json:"suspended,omitempty"`

	// History is the conversation without the system prompt.
	History []agent.Message `json:"history,omitempty"`
}

// DecodeState reads a State saved as JSON, refusing unknown layouts.
func DecodeState(raw []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("goals: decode state: %w", err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("goals: decode state: layout version %d, want %d", s.Version, stateVersion)
	}
	if err := s.Goal.validate(); err != nil {
		return nil, fmt.Errorf("goals: decode state: %w", err)
	}
	return &s, nil
}

// StateStore persists goal state. The controller calls SaveGoal after every
// turn and every status change, with a context that is not cancelled when
// the run's is (a cancelled goal must still be saved). An error stops the
// goal: a goal whose state cannot be saved would not survive a restart.
type StateStore interface {
	SaveGoal(ctx context.Context, s *State) error
}

// StateStoreFunc adapts a function to StateStore.
type StateStoreFunc func(ctx context.Context, s *State) error

// SaveGoal calls f.
func (f StateStoreFunc) SaveGoal(ctx context.Context, s *State) error { return f(ctx, s) }

// openItems lists the plan items not completed, as "content (status)".
func openItems(plan []agent.TodoItem) []string {
	var out []string
	for _, it := range plan {
		if it.Status != "completed" {
			out = append(out, fmt.Sprintf("%s (%s)", it.Content, it.Status))
		}
		for _, st := range it.Steps { // a completed phase has no open steps (todo_write)
			if st.Status != "completed" && it.Status == "completed" {
				out = append(out, fmt.Sprintf("%s › %s (%s)", it.Content, st.Content, st.Status))
			}
		}
	}
	return out
}

// normalizeBlocked folds wording drift out of a blocked state: case,
// whitespace and punctuation do not make two reports different.
func normalizeBlocked(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}
