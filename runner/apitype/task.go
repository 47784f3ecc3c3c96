package apitype

import (
	"encoding/json"
	"time"
)

// TaskState is where a task is in its life.
type TaskState string

// The task states. Queued, Running, WaitingApproval and WaitingCI are
// live; the rest are terminal (see Terminal).
const (
	StateQueued          TaskState = "queued"
	StateRunning         TaskState = "running"
	StateWaitingApproval TaskState = "waiting_approval"
	StateWaitingCI       TaskState = "waiting_ci" // published; its pull request waits for CI
	StateSucceeded       TaskState = "succeeded"
	StateFailed          TaskState = "failed"
	StateBlocked         TaskState = "blocked"
	StateCancelled       TaskState = "cancelled"
	StateInterrupted     TaskState = "interrupted"
	StateBudgetExhausted TaskState = "budget_exhausted"
)

// Terminal reports whether a task in state s is finished for good: every
// state but queued, running, waiting_approval and waiting_ci. An interrupted task is
// terminal until someone resumes it.
func (s TaskState) Terminal() bool {
	switch s {
	case StateQueued, StateRunning, StateWaitingApproval, StateWaitingCI:
		return false
	}
	return true
}

// Source is where a task came from.
type Source string

// The intake sources. A client submits as SourceAPI (the default) or
// SourceCLI; the others belong to the service's own intakes.
const (
	SourceAPI      Source = "api"
	SourceCLI      Source = "cli"
	SourceWebhook  Source = "webhook"
	SourceCron     Source = "cron"
	SourceSlack    Source = "slack"
	SourceTelegram Source = "telegram"
)

// Posture is how a task resolves the calls its permission policy asks a
// person about: ask, auto or yolo.
type Posture string

// The postures, from strictest to loosest.
const (
	PostureAsk  Posture = "ask"
	PostureAuto Posture = "auto"
	PostureYolo Posture = "yolo"
)

// Task is a task as GET /api/v1/tasks/{id} shows it.
type Task struct {
	ID        string         `json:"id"`
	Source    Source         `json:"source"`
	Requester string         `json:"requester"`
	Prompt    string         `json:"prompt"`
	Goal      bool           `json:"goal"`
	PlanFirst bool           `json:"plan_first"`
	PlanOnly  bool           `json:"plan_only,omitempty"`
	BudgetUSD float64        `json:"budget_usd,omitempty"`
	Ablate    string         `json:"ablate,omitempty"`
	Workspace string         `json:"workspace"`
	Posture   Posture        `json:"posture"`
	Notify    []NotifyTarget `json:"notify"`
	Approvers []string       `json:"approvers"`
	State     TaskState      `json:"state"`
	// Attempt counts how many times the task entered running.
	Attempt int `json:"attempt"`
	// Result is set once the task has run.
	Result     *Result    `json:"result,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Durations splits the task's time by where it was (SplitDurations);
	// only GET /api/v1/tasks/{id} sends it, lists do not.
	Durations *Durations `json:"durations,omitempty"`
}

// NotifyTarget is one place a task reports to, e.g. a Slack thread.
type NotifyTarget struct {
	Transport string `json:"transport"`        // "slack", "telegram", "webhook", …
	Channel   string `json:"channel"`          // channel or chat id
	Thread    string `json:"thread,omitempty"` // thread ts or reply-to message id
}

// Result is what a task produced.
type Result struct {
	Summary     string `json:"summary,omitempty"`
	FinalAnswer string `json:"final_answer,omitempty"`
	DiffStat    string `json:"diff_stat,omitempty"`
	Branch      string `json:"branch,omitempty"`
	Tokens      Usage  `json:"tokens"`
	// Cost is the USD of the calls whose model has prices. While
	// UnpricedTokens is above 0 it is a lower bound and CostComplete is
	// false. Models breaks tokens and cost down by model reference.
	Cost           float64              `json:"cost"`
	CostComplete   bool                 `json:"cost_complete"`
	UnpricedTokens int                  `json:"unpriced_tokens,omitempty"`
	Models         map[string]ModelCost `json:"models,omitempty"`
	DurationMS     int64                `json:"duration_ms"`
	// Error is the end's short code, with the log reference of the
	// detail when there is one: "provider.rejected (ref 1a2b3c4d)".
	Error string `json:"error,omitempty"`
	// Reason says in a sentence why the task ended as it did.
	Reason string `json:"reason,omitempty"`
	// Publish is what became of the branch under [workspaces.publish]:
	// "pending", "awaiting_approval", "pr", "branch", "unchanged" or "failed" (PublishError
	// says why); "" when the workspace does not publish.
	Publish      string `json:"publish,omitempty"`
	PublishError string `json:"publish_error,omitempty"`
	// PR is the pull (merge) request the task's branch was published as.
	PR *PullRequest `json:"pr,omitempty"`
	// Deliverables are the files the task declared for people (present).
	Deliverables []Deliverable `json:"deliverables,omitempty"`
	// Delegation is the task's delegation counters over all its runs.
	Delegation *Delegation `json:"delegation,omitempty"`
}

// Delegation is the ten delegation counters of a task (the SPEC's
// "Measuring delegation"): which shape ran, the children's share of the
// work, and the claims the service refused to back.
type Delegation struct {
	SubagentRuns         int `json:"subagent_runs"`
	SubagentNestedRuns   int `json:"subagent_nested_runs"`
	SubagentToolCalls    int `json:"subagent_tool_calls"`
	SubagentMutations    int `json:"subagent_mutations"`
	DuplicateWorkPaths   int `json:"duplicate_work_paths"`
	CompletionReports    int `json:"completion_reports"`
	CompletionsProseOnly int `json:"completions_prose_only"`
	FalseCompletions     int `json:"false_completions"`
	CriterionDowngrades  int `json:"criterion_downgrades"`
	WriteScopeViolations int `json:"write_scope_violations"`
}

// PullRequest is a task's pull request.
type PullRequest struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
	State  string `json:"state"` // open, closed or merged
	// CI is the CI on the head commit when the workspace waits for it
	// (wait_ci).
	CI *CI `json:"ci,omitempty"`
	// Conflicts names the files the branch conflicted with its base in
	// (BaseCommit) when it was published; continuing the task rebases it.
	Conflicts  []string `json:"conflicts,omitempty"`
	BaseCommit string   `json:"base_commit,omitempty"`
	// Mergeable is the forge's own verdict when it was published: clean,
	// conflict or unknown.
	Mergeable string `json:"mergeable,omitempty"`
}

// CI is the CI a task waits for or ended on: State is waiting, fixing,
// success, failure, timeout or error; Fixes counts the failures fed back
// to the task.
type CI struct {
	State  string    `json:"state"`
	Commit string    `json:"commit,omitempty"`
	Checks []CICheck `json:"checks,omitempty"`
	Fixes  int       `json:"fixes,omitempty"`
	Since  time.Time `json:"since,omitzero"`
}

// CICheck is one check on the head commit: pending, success or failure.
type CICheck struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
}

// Usage counts a model's tokens.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Cached     int `json:"cached"`
}

// ModelCost is what one model's calls in a task used and cost. An
// unpriced model has Cost 0 and Priced false: unknown, not free.
type ModelCost struct {
	Calls  int     `json:"calls"`
	Tokens Usage   `json:"tokens"`
	Cost   float64 `json:"cost"` // USD; 0 when unpriced
	Priced bool    `json:"priced"`
}

// SubmitRequest is the body of POST /api/v1/tasks. The requester is the
// bearer token's principal; the body cannot name one.
type SubmitRequest struct {
	Prompt string `json:"prompt,omitempty"`
	// Command names a custom command of the workspace; its rendered body
	// is the prompt (Prompt, when also set, follows it). Args fill it.
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	Goal      bool     `json:"goal,omitempty"`
	PlanFirst bool     `json:"plan_first,omitempty"`
	// PlanOnly: the first turn only plans (the plan kept, nothing
	// executed); needs [agent] planner_model; not with Goal or PlanFirst.
	PlanOnly bool `json:"plan_only,omitempty"`
	// BudgetUSD is a goal's cost budget per slice; 0 means the configured one.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// Ablate "subagent" runs the task without delegation: no task or fleet
	// tool, no sub-agent skill (the control arm of the delegation
	// measurement).
	Ablate string `json:"ablate,omitempty"`
	// Workspace names a [[workspaces]] entry; empty means a scratch directory.
	Workspace string `json:"workspace,omitempty"`
	// Posture empty means ask.
	Posture Posture        `json:"posture,omitempty"`
	Notify  []NotifyTarget `json:"notify,omitempty"`
	// Approvers narrows who may decide the task's approvals (principal ids).
	Approvers []string `json:"approvers,omitempty"`
	// Source is SourceAPI (when empty) or SourceCLI.
	Source Source `json:"source,omitempty"`
}

// Submitted answers POST /api/v1/tasks: 202 with Created true, or 200 and
// Created false when an Idempotency-Key matched an earlier task.
// (The fields keep the order the API has always written them in.)
type Submitted struct {
	Created bool      `json:"created"`
	ID      string    `json:"id"`
	State   TaskState `json:"state"`
}

// TaskRef answers the task transitions (cancel, messages, resume): the
// task's id and its state right after the request.
type TaskRef struct {
	ID    string    `json:"id"`
	State TaskState `json:"state"`
}

// TaskPage answers GET /api/v1/tasks, newest first. NextCursor, when not
// empty, fetches the following page (?cursor=).
type TaskPage struct {
	NextCursor string `json:"next_cursor"`
	Tasks      []Task `json:"tasks"`
}

// MessageRequest is the body of POST /api/v1/tasks/{id}/messages.
type MessageRequest struct {
	Text string `json:"text"`
}

// Event is one entry of a task's append-only event log. Seq numbers a
// task's events from 1; Payload's shape depends on Type (see the SPEC's
// list of event types).
type Event struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	Time    time.Time       `json:"time"`
}

// EventList answers GET /api/v1/tasks/{id}/events.
type EventList struct {
	Events []Event `json:"events"`
}

// The event type whose payload carries a task's new state.
const EventTaskState = "task_state"

// TaskStatePayload is the payload of a task_state event.
type TaskStatePayload struct {
	State TaskState `json:"state"`
}

// EndsTask reports whether e announces a terminal state: the last event a
// watcher of the task needs.
func (e Event) EndsTask() bool {
	if e.Type != EventTaskState {
		return false
	}
	var p TaskStatePayload
	return json.Unmarshal(e.Payload, &p) == nil && p.State != "" && p.State.Terminal()
}

// Diff is a task's changes against its base (GET /api/v1/tasks/{id}/diff):
// `git diff base...branch` as the task's branch holds it, the text the
// task wrote (show it as data), at most 8 MiB; Truncated when longer.
type Diff struct {
	TaskID    string `json:"task_id"`
	Branch    string `json:"branch"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
}

// Deliverable is a file a task declared as one of its results for people.
type Deliverable struct {
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
	Bytes       int64  `json:"bytes"`
}
