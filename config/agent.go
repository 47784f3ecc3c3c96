package config

import (
	"math"
	"time"
)

// Agent is the [agent] table: how one agent run behaves.
type Agent struct {
	// SystemPrompt is the system prompt text. When system_prompt_file is set
	// instead, Load reads that file into SystemPrompt.
	SystemPrompt string `toml:"system_prompt"`
	// SystemPromptFile is the file the prompt was read from, made absolute
	// relative to the config file that named it; "" when the prompt is inline.
	SystemPromptFile string `toml:"system_prompt_file"`
	// Temperature is the sampling temperature in [0, 2]; nil = the model's default.
	Temperature *float64 `toml:"temperature"`
	// MaxSteps caps model turns per run; default 100.
	MaxSteps int `toml:"max_steps"`
	// GoalTokenBudget, GoalMaxTurns and GoalWallClock bound a goal; 0 = off.
	GoalTokenBudget int           `toml:"goal_token_budget"`
	GoalMaxTurns    int           `toml:"goal_max_turns"`
	GoalWallClock   time.Duration `toml:"goal_wall_clock"` // a duration string such as "90m"
	// GoalBudgetUSD bounds what a goal's slice may cost (its turns and
	// sub-agents, priced calls only); 0 = off.
	GoalBudgetUSD float64 `toml:"goal_budget_usd"`
	// MaxSubagentConcurrency caps sub-agents running at once; default 6.
	MaxSubagentConcurrency int `toml:"max_subagent_concurrency"`
	// MaxParallelWriters caps sub-agents holding write claims at once; default 3.
	MaxParallelWriters int `toml:"max_parallel_writers"`
	// MaxSubagentDepth bounds nested fleets (seed §3.13): the parent run is
	// depth 0, a child below this depth may start sub-agents of its own;
	// default 2 (children may delegate once more), 1 keeps fleets flat.
	MaxSubagentDepth int `toml:"max_subagent_depth"`
	// CompactRatio is the share of the model's context window at which the
	// conversation is compacted; strictly between 0 and 1, default 0.90
	// (see compact.go).
	CompactRatio float64 `toml:"compact_ratio"`
	// SubagentModel is the model of sub-agents whose profile and call name
	// none; SubagentModels sets it per profile and wins over everything
	// (seed §3.10). "" = the parent's model.
	SubagentModel  string            `toml:"subagent_model"`
	SubagentModels map[string]string `toml:"subagent_models"`
	// SubagentEffort is the reasoning effort of sub-agents whose profile and
	// call name none; SubagentEfforts sets it per profile and wins over
	// everything (seed §3.10, see SubagentEffort). "" = the effort of the
	// child's provider.
	SubagentEffort  string            `toml:"subagent_effort"`
	SubagentEfforts map[string]string `toml:"subagent_efforts"`
	// PlannerModel names the planner of the two-model Coordinator (seed
	// §3.5); "" or the executor's own model = one model, no planner.
	PlannerModel string `toml:"planner_model"`
	// PlannerEffort is the reasoning effort of the planner's requests; ""
	// = the effort of the planner model's provider.
	PlannerEffort string `toml:"planner_effort"`
}

// maxPromptBytes bounds system_prompt_file so a wrong path (a log, an
// image) fails loudly instead of filling the context window.
const maxPromptBytes = 1 << 20

func (a *Agent) validate(c *Config, p *problems) {
	if t := a.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		p.add(c.origins["agent.temperature"], "agent.temperature", "must be between 0 and 2 (got %g)", *t)
	}
	checkRange(p, c.origins["agent.max_steps"], "agent.max_steps", a.MaxSteps, 1, 100000)
	checkNonNegative(p, c.origins["agent.goal_token_budget"], "agent.goal_token_budget", a.GoalTokenBudget)
	checkNonNegative(p, c.origins["agent.goal_max_turns"], "agent.goal_max_turns", a.GoalMaxTurns)
	checkUSD(p, c.origins["agent.goal_budget_usd"], "agent.goal_budget_usd", a.GoalBudgetUSD)
	if a.GoalWallClock < 0 {
		p.add(c.origins["agent.goal_wall_clock"], "agent.goal_wall_clock", "must not be negative (got %s)", a.GoalWallClock)
	}
	checkRange(p, c.origins["agent.max_subagent_concurrency"], "agent.max_subagent_concurrency", a.MaxSubagentConcurrency, 1, 64)
	checkRange(p, c.origins["agent.max_parallel_writers"], "agent.max_parallel_writers", a.MaxParallelWriters, 1, 64)
	checkRange(p, c.origins["agent.max_subagent_depth"], "agent.max_subagent_depth", a.MaxSubagentDepth, 1, 64)
	a.validateCompactRatio(c, p)
	checkEffort(p, c.origins["agent.subagent_effort"], "agent.subagent_effort", a.SubagentEffort)
	for _, k := range sortedKeys(a.SubagentEfforts) {
		checkEffort(p, c.origins["agent.subagent_efforts"], "agent.subagent_efforts."+k, a.SubagentEfforts[k])
	}
	checkEffort(p, c.origins["agent.planner_effort"], "agent.planner_effort", a.PlannerEffort)
	if a.PlannerModel != "" && len(c.Providers) > 0 {
		if _, err := c.ResolveModel(a.PlannerModel); err != nil {
			p.add(c.origins["agent.planner_model"], "agent.planner_model", "%v", err)
		}
	}
}
