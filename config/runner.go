package config

import "time"

// Defaults and bounds of the [runner] table. They are exported because the
// runner applies the same values to a configuration built in code (a test,
// a program embedding it): this package sits below every component and
// imports none, so the runner reads them from here rather than the other
// way round.
const (
	DefaultMaxConcurrentTasks = 4
	DefaultTaskTimeout        = 2 * time.Hour
	DefaultApprovalTTL        = 30 * time.Minute
	MaxApprovalTTL            = 24 * time.Hour
	DefaultStallAfter         = 10 * time.Minute
	DefaultBudgetWarn         = 0.8
)

// Runner is the [runner] table: how the service runs tasks.
type Runner struct {
	MaxConcurrentTasks int           `toml:"max_concurrent_tasks"` // per node; default 4
	TaskTimeout        time.Duration `toml:"task_timeout"`         // default "2h"
	KeepWorkspaces     bool          `toml:"keep_workspaces"`      // keep worktrees after a task ends
	ApprovalTTL        TTL           `toml:"approval_ttl"`         // unanswered approvals deny after this; default "30m", max "24h"; "none": no deadline
	MaxToolCalls       int           `toml:"max_tool_calls"`       // per task; 0 = off
	MaxTokens          int           `toml:"max_tokens"`           // per task; 0 = off
	MaxCostPerTask     float64       `toml:"max_cost_per_task"`    // USD per task run, priced calls only; 0 = off
	// BudgetWarn is the share of a run's cost or token budget at which
	// the task says so once (a budget_warning event, a chat post);
	// default 0.8; 0 or 1 means no warning.
	BudgetWarn float64 `toml:"budget_warn"`
	// StallAfter is how long a running task may go without a new event
	// before its chat thread says it makes no progress; default "10m",
	// at least "1m".
	StallAfter time.Duration `toml:"stall_after"`
	// RequireSecondApprover: nobody decides the calls of a task they
	// requested, admins included (a two-person rule); default false.
	RequireSecondApprover bool `toml:"require_second_approver"`
	// KeepWorktrees is how long after its end a task's worktree, local
	// branch and scratch directory may stay; default "7d", at least "1h";
	// "none" keeps them for ever. Uncommitted work and unpublished
	// commits are never removed.
	KeepWorktrees Retention `toml:"keep_worktrees"`
	// Retain is how long after its end a task's per-step history (events,
	// messages, tool journal) is kept; default "90d", at least "1d";
	// "none" keeps it for ever. The task's row, result, cost and the
	// audit of its approvals stay regardless.
	Retain Retention `toml:"retain"`
}

// Validate checks r as Load does, for a Runner built in code: the runner's
// constructor calls it, so a value Load refuses is refused there too, with
// the same message.
func (r Runner) Validate() error {
	var p problems
	r.validate(&Config{}, &p)
	return p.err()
}

func (r *Runner) validate(c *Config, p *problems) {
	checkRange(p, c.origins["runner.max_concurrent_tasks"], "runner.max_concurrent_tasks", r.MaxConcurrentTasks, 1, 1024)
	if r.TaskTimeout <= 0 {
		p.add(c.origins["runner.task_timeout"], "runner.task_timeout", "must be positive (got %s)", r.TaskTimeout)
	}
	if !r.ApprovalTTL.None() && (r.ApprovalTTL <= 0 || r.ApprovalTTL > TTL(MaxApprovalTTL)) {
		p.add(c.origins["runner.approval_ttl"], "runner.approval_ttl", "must be positive and at most 24h, or \"none\" (got %s)", r.ApprovalTTL)
	}
	if r.StallAfter != 0 && (r.StallAfter < time.Minute || r.StallAfter > 24*time.Hour) {
		p.add(c.origins["runner.stall_after"], "runner.stall_after", "must be between 1m and 24h (got %s)", r.StallAfter)
	}
	checkRetention(p, c.origins["runner.keep_worktrees"], "runner.keep_worktrees", r.KeepWorktrees, MinKeepWorktrees)
	checkRetention(p, c.origins["runner.retain"], "runner.retain", r.Retain, MinRetain)
	checkNonNegative(p, c.origins["runner.max_tool_calls"], "runner.max_tool_calls", r.MaxToolCalls)
	checkNonNegative(p, c.origins["runner.max_tokens"], "runner.max_tokens", r.MaxTokens)
	checkUSD(p, c.origins["runner.max_cost_per_task"], "runner.max_cost_per_task", r.MaxCostPerTask)
	if !(r.BudgetWarn >= 0 && r.BudgetWarn <= 1) { // NaN too
		p.add(c.origins["runner.budget_warn"], "runner.budget_warn", "must be a share from 0 to 1, such as 0.8 (got %v)", r.BudgetWarn)
	}
}
