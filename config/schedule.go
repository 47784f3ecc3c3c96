package config

import (
	"strings"

	"reasonix/internal/cronspec"
	"reasonix/internal/posture"
)

// Values of Schedule.Overlap.
const (
	// OverlapSkip records a tick that comes while the previous run is
	// still going as skipped (the default).
	OverlapSkip = "skip"
	// OverlapQueue holds the tick until the previous run ends, then fires
	// it; ticks that pile up meanwhile collapse into the latest.
	OverlapQueue = "queue"
)

// Values of Schedule.CatchUp.
const (
	// CatchUpLatest fires the latest missed occurrence once after downtime
	// (the default): at most one catch-up run, however long the gap.
	CatchUpLatest = "latest"
	// CatchUpNone drops occurrences that are more than a minute late.
	CatchUpNone = "none"
)

// DefaultMaxFailures is how many failed runs in a row pause a schedule
// when max_failures is not set.
const DefaultMaxFailures = 3

// Schedule is one [[schedules]] entry: a task the service submits on a
// cron schedule, as the principal "schedule:<name>". Entries are written by
// the administrator, so every posture is allowed, yolo included; a yolo
// schedule runs unattended with only deny rules and the sandbox in its way.
type Schedule struct {
	Name string `toml:"name"` // required, unique
	// Cron is a five-field expression or a descriptor (@daily, @every 10m),
	// optionally prefixed with CRON_TZ=Zone.
	Cron string `toml:"cron"`
	// Timezone is the IANA zone the fields are read in; default UTC.
	Timezone string `toml:"timezone"`
	Prompt   string `toml:"prompt"` // required unless Command is set
	// Command names a custom command (.reasonix/commands) whose body, with
	// Args, is the prompt; Prompt, when also set, follows it.
	Command   string          `toml:"command"`
	Args      []string        `toml:"args"`
	Goal      bool            `toml:"goal"`
	BudgetUSD float64         `toml:"budget_usd"` // with goal: the goal's cost budget per slice; 0 = [agent] goal_budget_usd
	Workspace string          `toml:"workspace"`  // a [[workspaces]] name; "" is a scratch directory
	Posture   posture.Posture `toml:"posture"`    // default ask
	Notify    []NotifyTarget  `toml:"notify"`
	Overlap   string          `toml:"overlap"`  // skip (default) or queue
	CatchUp   string          `toml:"catch_up"` // latest (default) or none
	// Enabled is true unless set to false; a disabled schedule never fires
	// and is listed as such.
	Enabled *bool `toml:"enabled"`
	// MaxFailures pauses the schedule after this many failed runs in a
	// row; default DefaultMaxFailures.
	MaxFailures int `toml:"max_failures"`
	// ApprovalTTL is how long its runs' approval requests wait for an
	// answer; 0 means [runner] approval_ttl, NoTTL no deadline.
	ApprovalTTL TTL `toml:"approval_ttl"`

	// Source is the file that declared the entry.
	Source string `toml:"-"`
}

// IsEnabled reports whether the schedule may fire (Enabled unset or true).
func (s *Schedule) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

func (s *Schedule) applyDefaults() {
	if s.Posture == "" {
		s.Posture = posture.Ask
	}
	if s.Overlap == "" {
		s.Overlap = OverlapSkip
	}
	if s.CatchUp == "" {
		s.CatchUp = CatchUpLatest
	}
	if s.MaxFailures == 0 {
		s.MaxFailures = DefaultMaxFailures
	}
}

func (s *Schedule) validate(c *Config, label string, p *problems) {
	checkEntryTTL(p, s.Source, label+".approval_ttl", s.ApprovalTTL)
	if s.Name == "" {
		p.add(s.Source, label+".name", "is required")
	} else if !validEntryName(s.Name) {
		p.add(s.Source, label+".name", "%q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", s.Name)
	}
	if strings.TrimSpace(s.Cron) == "" {
		p.add(s.Source, label+".cron", `is required (five fields such as "0 3 * * *", or "@daily", "@every 10m")`)
	} else if _, err := cronspec.Parse(s.Cron, s.Timezone); err != nil {
		p.add(s.Source, label+".cron", "%v", err)
	}
	if strings.TrimSpace(s.Prompt) == "" && s.Command == "" {
		p.add(s.Source, label+".prompt", "is required (or name a command)")
	}
	checkCommand(p, s.Source, label, s.Command, s.Args)
	checkUSD(p, s.Source, label+".budget_usd", s.BudgetUSD)
	if s.BudgetUSD > 0 && !s.Goal {
		p.add(s.Source, label+".budget_usd", "is a goal's cost budget; set goal = true (or bound every task with [runner] max_cost_per_task)")
	}
	if s.Workspace != "" && !c.hasWorkspace(s.Workspace) {
		p.add(s.Source, label+".workspace", "%q is not a [[workspaces]] name", s.Workspace)
	}
	checkOneOf(p, s.Source, label+".overlap", s.Overlap, OverlapSkip, OverlapQueue)
	checkOneOf(p, s.Source, label+".catch_up", s.CatchUp, CatchUpLatest, CatchUpNone)
	checkRange(p, s.Source, label+".max_failures", s.MaxFailures, 1, 1000)
	checkNotify(p, s.Source, label+".notify", s.Notify)
}
