package goals

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/agent"
	"reasonix/internal/ids"
)

// HostConfig assembles a Host.
type HostConfig struct {
	// Factory builds every child's agent.Config; required.
	Factory ChildFactory
	// Workdir is the absolute workspace root. Write claims are relative to
	// it; required.
	Workdir string
	// Paths resolves paths the way the run's file tools do (normally the
	// task's policy.Confinement), so write claims are checked on the same
	// symlink-free form. Nil resolves symlinks under Workdir directly.
	Paths agent.PathGuard
	// MaxConcurrency bounds children running at once
	// (`max_subagent_concurrency`), in each fleet and in the whole tree of
	// nested fleets (slots.go); 0 means 6.
	MaxConcurrency int
	// MaxParallelWriters bounds writer children running at once
	// (`max_parallel_writers`); 0 means 3.
	MaxParallelWriters int
	// UpstreamBudget bounds the dependency answers in one
	// <upstream-results> block, in bytes; 0 means 16 KiB.
	UpstreamBudget int
	// ReadOnlyProfile reports whether a profile only reads. Read-only
	// children claim nothing and do not count as writers. Nil makes every
	// child a writer.
	ReadOnlyProfile func(profile string) bool
	// ShellBound says the Factory binds a writer child's bash to its write
	// claim (see ClaimedShell) or leaves bash out. False (the default)
	// removes bash from every writer child that declares write_paths, since
	// nothing else could hold its writes to the claim.
	ShellBound bool
	// PathArgs names the path-aware writers and the argument keys holding
	// the paths they write; nil means DefaultPathArgs. A writer tool not
	// listed cannot be scoped and is removed from children with write_paths.
	PathArgs map[string][]string
	// Price prices each child's model calls, for the node's cost and the
	// goal's cost budget; nil leaves them unpriced.
	Price PriceFunc
	// Observer receives the fleet and sub-agent events; nil drops them.
	// Calls are serialized; it must not block for long.
	Observer agent.Observer
	// MaxDepth is `max_subagent_depth`: the parent run is depth 0, its
	// children depth 1, theirs depth 2. A child below MaxDepth gets task
	// and fleet of its own; one at MaxDepth does not. 0 means
	// DefaultMaxDepth; 1 keeps fleets flat.
	MaxDepth int
	// Now is the clock for durations; nil means time.Now.
	Now func() time.Time
}

// DefaultMaxDepth is the default `max_subagent_depth`: a child may
// delegate once more, its children may not.
const DefaultMaxDepth = 2

// DefaultPathArgs are the built-in path-aware writers.
var DefaultPathArgs = map[string][]string{
	"write_file":    {"path"},
	"edit_file":     {"path"},
	"multi_edit":    {"path"},
	"move_file":     {"path", "new_path"},
	"delete_range":  {"path"},
	"delete_symbol": {"path"},
	// notebook_edit changes the notebook at path.
	"notebook_edit": {"path"},
}

// Counters are the ten delegation counters of seed §3.17, cumulative over
// a Host's life. `reasonix run --json` reports them under these names,
// beside the run's own tool_calls (parent and children).
type Counters struct {
	// SubagentRuns counts every child run, nested ones included;
	// SubagentNestedRuns those a child started (depth 2 and deeper).
	SubagentRuns       int `json:"subagent_runs"`
	SubagentNestedRuns int `json:"subagent_nested_runs"`
	// SubagentToolCalls counts the children's tool calls; the run's own
	// tool_calls (parent and children) is reported beside the counters.
	SubagentToolCalls int `json:"subagent_tool_calls"`
	// SubagentMutations counts paths children wrote through path-aware
	// writers (one per path per call); DuplicateWorkPaths the paths more
	// than one child wrote. A bash command's writes are not among them:
	// the host sees the command and its exit code (a receipt), not which
	// paths it changed, and guessing them from the text would count what
	// a command only reads.
	SubagentMutations  int `json:"subagent_mutations"`
	DuplicateWorkPaths int `json:"duplicate_work_paths"`
	// CompletionReports counts writer children that closed with
	// complete_subtask, CompletionsProseOnly those that ended without one.
	CompletionReports    int `json:"completion_reports"`
	CompletionsProseOnly int `json:"completions_prose_only"`
	// FalseCompletions counts "complete" claims the host lowered,
	// CriterionDowngrades satisfied criteria it could not back.
	FalseCompletions    int `json:"false_completions"`
	CriterionDowngrades int `json:"criterion_downgrades"`
	// WriteScopeViolations counts writes refused outside a claim.
	WriteScopeViolations int `json:"write_scope_violations"`
}

// Add returns c plus o, field by field.
func (c Counters) Add(o Counters) Counters {
	return Counters{
		SubagentRuns:         c.SubagentRuns + o.SubagentRuns,
		SubagentNestedRuns:   c.SubagentNestedRuns + o.SubagentNestedRuns,
		SubagentToolCalls:    c.SubagentToolCalls + o.SubagentToolCalls,
		SubagentMutations:    c.SubagentMutations + o.SubagentMutations,
		DuplicateWorkPaths:   c.DuplicateWorkPaths + o.DuplicateWorkPaths,
		CompletionReports:    c.CompletionReports + o.CompletionReports,
		CompletionsProseOnly: c.CompletionsProseOnly + o.CompletionsProseOnly,
		FalseCompletions:     c.FalseCompletions + o.FalseCompletions,
		CriterionDowngrades:  c.CriterionDowngrades + o.CriterionDowngrades,
		WriteScopeViolations: c.WriteScopeViolations + o.WriteScopeViolations,
	}
}

// Fields lists the counters by their JSON names, in the seed's order, for
// metrics and tables.
func (c Counters) Fields() []CounterField {
	return []CounterField{
		{"subagent_runs", c.SubagentRuns}, {"subagent_nested_runs", c.SubagentNestedRuns},
		{"subagent_tool_calls", c.SubagentToolCalls},
		{"subagent_mutations", c.SubagentMutations}, {"duplicate_work_paths", c.DuplicateWorkPaths},
		{"completion_reports", c.CompletionReports}, {"completions_prose_only", c.CompletionsProseOnly},
		{"false_completions", c.FalseCompletions}, {"criterion_downgrades", c.CriterionDowngrades},
		{"write_scope_violations", c.WriteScopeViolations},
	}
}

// CounterField is one named counter.
type CounterField struct {
	Name  string
	Value int
}

// ChildRecord is a finished child. Records are what read_subagent_result,
// list_subagents and adopt_ref address by Ref; a runner persists them
// (Host.Records) and restores them (HostConfig-independent Host.Restore).
type ChildRecord struct {
	Ref         string        `json:"ref"`
	FleetID     string        `json:"fleet_id,omitempty"`
	ID          string        `json:"id"`
	State       NodeState     `json:"state"`
	Reason      string        `json:"reason,omitempty"`
	Answer      string        `json:"answer"`
	Tokens      int           `json:"tokens"`
	Cost        float64       `json:"cost,omitempty"` // USD of its priced calls
	Duration    time.Duration `json:"duration"`
	CapsuleHash string        `json:"capsule_hash"`
	// Capsule is what the child was given (seed §3.13): references and
	// digests, the hash above is its identity.
	Capsule *Capsule          `json:"capsule,omitempty"`
	Report  *CompletionReport `json:"report,omitempty"`
	// Parent is the ref of the child that started this one ("" for the
	// parent run's own children) and Depth its depth (1 for those).
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	// History is the child's conversation (no system prompt), kept so
	// continue_from and fork_from can pick it up; empty when it outgrew
	// maxKeptHistory.
	History  []agent.Message `json:"history,omitempty"`
	Receipts Receipts        `json:"receipts"`
	Finished time.Time       `json:"finished"`
}

// Host runs the sub-agents of one parent conversation. It is safe for
// concurrent use.
type Host struct {
	cfg     HostConfig
	workdir string // resolved

	emitMu  sync.Mutex
	mu      sync.Mutex
	records map[string]*ChildRecord
	order   []string // refs, oldest first

	runs, toolCalls, reports, falseDone, downgrades, violations atomic.Int64
	nested, mutations, proseOnly, duplicates                    atomic.Int64
	fleets                                                      atomic.Int64
	spent                                                       spend // the children's cost, USD

	// slots bound the children running at once in the whole tree
	// (slots.go).
	slots chan struct{}

	writersMu sync.Mutex
	writers   map[string]string // path -> the first child ref that wrote it ("" once a second did)
}

// NewHost checks cfg and applies defaults.
func NewHost(cfg HostConfig) (*Host, error) {
	if cfg.Factory == nil {
		return nil, errors.New("goals: host config Factory is required")
	}
	if !filepath.IsAbs(cfg.Workdir) {
		return nil, fmt.Errorf("goals: host config Workdir must be an absolute path, got %q", cfg.Workdir)
	}
	if cfg.MaxConcurrency < 0 || cfg.MaxParallelWriters < 0 || cfg.UpstreamBudget < 0 || cfg.MaxDepth < 0 {
		return nil, errors.New("goals: host limits must not be negative")
	}
	cfg.MaxConcurrency = cmp.Or(cfg.MaxConcurrency, 6)
	cfg.MaxParallelWriters = cmp.Or(cfg.MaxParallelWriters, 3)
	cfg.UpstreamBudget = cmp.Or(cfg.UpstreamBudget, 16<<10)
	cfg.MaxDepth = cmp.Or(cfg.MaxDepth, DefaultMaxDepth)
	if cfg.PathArgs == nil {
		cfg.PathArgs = DefaultPathArgs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Host{cfg: cfg, records: map[string]*ChildRecord{}, writers: map[string]string{}, slots: make(chan struct{}, cfg.MaxConcurrency)}
	wd, err := h.resolve(cfg.Workdir)
	if err != nil {
		return nil, fmt.Errorf("goals: host workdir: %w", err)
	}
	h.workdir = wd
	return h, nil
}

// Spent is what the host's children have cost so far (USD, priced calls).
func (h *Host) Spent() float64 { return h.spent.total() }

// Counters returns a snapshot of the delegation counters.
func (h *Host) Counters() Counters {
	return Counters{
		SubagentRuns:         int(h.runs.Load()),
		SubagentNestedRuns:   int(h.nested.Load()),
		SubagentToolCalls:    int(h.toolCalls.Load()),
		SubagentMutations:    int(h.mutations.Load()),
		DuplicateWorkPaths:   int(h.duplicates.Load()),
		CompletionReports:    int(h.reports.Load()),
		CompletionsProseOnly: int(h.proseOnly.Load()),
		FalseCompletions:     int(h.falseDone.Load()),
		CriterionDowngrades:  int(h.downgrades.Load()),
		WriteScopeViolations: int(h.violations.Load()),
	}
}

// MaxDepth is the resolved `max_subagent_depth`.
func (h *Host) MaxDepth() int { return h.cfg.MaxDepth }

// Records lists the finished children, oldest first, for persistence.
func (h *Host) Records() []ChildRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ChildRecord, 0, len(h.order))
	for _, ref := range h.order {
		out = append(out, *h.records[ref])
	}
	return out
}

// Restore adds records saved from an earlier Host of the same
// conversation, so their refs can be read and adopted again. A ref already
// known is an error.
func (h *Host) Restore(records []ChildRecord) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range records {
		if r.Ref == "" {
			return errors.New("goals: restore: a record has no ref")
		}
		if _, dup := h.records[r.Ref]; dup {
			return fmt.Errorf("goals: restore: ref %q is already known", r.Ref)
		}
		rec := r
		h.records[r.Ref] = &rec
		h.order = append(h.order, r.Ref)
	}
	return nil
}

func (h *Host) record(r *ChildRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records[r.Ref] = r
	h.order = append(h.order, r.Ref)
}

func (h *Host) lookup(ref string) (ChildRecord, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.records[ref]
	if !ok {
		return ChildRecord{}, false
	}
	return *r, true
}

// newest lists records newest first.
func (h *Host) newest() []ChildRecord {
	out := h.Records()
	slices.Reverse(out)
	return out
}

func (h *Host) emit(e agent.Event) {
	if h.cfg.Observer != nil {
		h.emitMu.Lock()
		defer h.emitMu.Unlock()
		h.cfg.Observer(e)
	}
}

func newRef() string { return "sa-" + ids.Hex(6) }

// RunFleet runs a preflighted graph to its end and returns every node's
// final status. Adopted refs are checked before anything starts. The error
// is non-nil only when the fleet could not start (an unadoptable ref, a
// write claim outside the workspace); failed items are reported in the
// result, not as an error.
func (h *Host) RunFleet(ctx context.Context, g *Graph) (FleetResult, error) {
	return h.runGraph(ctx, g, nil)
}
