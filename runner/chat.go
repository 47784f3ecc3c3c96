package runner

import (
	"reasonix/runner/apitype"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// The names below are the records the Service hands out and takes in, for
// code outside runner/... — the chat relay in bot/... above all, which may
// import this package and nothing under it. They are aliases, not copies:
// a runner.Task is a store.Task, so a value passes between the Service, the
// store and the relay unchanged, and the store implements the relay's own
// storage interface (bot/relay.Store) without knowing about it.

// Records of tasks and their logs.
type (
	Task         = store.Task
	TaskFilter   = store.TaskFilter
	TaskPage     = store.TaskPage
	State        = store.State
	Source       = store.Source
	NotifyTarget = store.NotifyTarget
	Event        = store.Event
	// Durations is a task's time split by where it was, as a final_report
	// carries it.
	Durations = apitype.Durations
)

// A task's states.
const (
	StateQueued          = store.StateQueued
	StateRunning         = store.StateRunning
	StateWaitingApproval = store.StateWaitingApproval
	StateWaitingCI       = store.StateWaitingCI
	StateSucceeded       = store.StateSucceeded
	StateFailed          = store.StateFailed
	StateBlocked         = store.StateBlocked
	StateCancelled       = store.StateCancelled
	StateInterrupted     = store.StateInterrupted
	StateBudgetExhausted = store.StateBudgetExhausted
)

// Approvals, and the one vocabulary of decisions: what an approver chooses
// (Decision.Decision), what the store records (Approval.Decision), what an
// approval button and a decision typed to the bot carry.
type (
	Approval      = store.Approval
	ApprovalState = store.ApprovalState
	Choice        = store.Decision
)

// An approval's states.
const (
	ApprovalPending = store.ApprovalPending
	ApprovalAllowed = store.ApprovalAllowed
	ApprovalDenied  = store.ApprovalDenied
	ApprovalExpired = store.ApprovalExpired
)

// The choices of an approver. AllowTask also covers later identical calls
// of the task, under the scope chosen; AllowAlways those of every later
// task of its workspace, schedule or webhook (a standing grant).
const (
	AllowOnce   = store.AllowOnce
	AllowTask   = store.AllowTask
	AllowAlways = store.AllowAlways
	Deny        = store.Deny
	// StopPublish answers a budget card: stop, and publish what exists.
	StopPublish = store.StopPublish
)

// Roles, lowest first; Role.AtLeast is the one comparison of them.
type Role = store.Role

const (
	RoleSubmit  = store.RoleSubmit
	RoleApprove = store.RoleApprove
	RoleGrant   = store.RoleGrant
	RoleAdmin   = store.RoleAdmin
)

// The chat relay's durable memory, kept by the store for the relay's own
// storage interface (see bot/relay.Store).
type (
	ChatPost            = store.ChatPost
	ChatClaim           = store.ChatClaim
	UnfinishedChatEvent = store.UnfinishedChatEvent
)

// What claiming a chat delivery found.
const (
	ChatClaimed  = store.ChatClaimed
	ChatHandled  = store.ChatHandled
	ChatInFlight = store.ChatInFlight
)

// ErrRecordNotFound is the store's "no such record", as a record lookup
// of the store returns it (a chat post, a thread's task). The Service's
// own methods answer an *Error of kind ErrNotFound instead, which wraps
// it.
var ErrRecordNotFound = store.ErrNotFound

// FormatCost says a spend the way every report of the service does: in
// dollars, "unpriced" (never $0) when some tokens had no known price.
func FormatCost(usd float64, unpricedTokens int) string {
	return session.FormatCost(usd, unpricedTokens)
}
