package goals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"reasonix/agent"
)

// ChildSpec is what the host asks a ChildFactory to build. The child
// inherits nothing else (seed §3.13): no parent conversation, no goal, no
// memory, no sibling results it did not depend on.
type ChildSpec struct {
	FleetID string
	ID      string // the fleet item id ("task" for the task tool)
	Ref     string // the address its answer will have
	// Prompt is the task text, exactly as the parent wrote it.
	Prompt  string
	Profile string // resolved by the factory; "" for the default worker
	Model   string // requested model; the factory decides whether to honour it
	Effort  string // requested reasoning effort; the factory ranks it (seed §3.10)
	// WritePaths is the claim, workspace-relative; empty on a writer means
	// the whole workspace.
	WritePaths []string
	// Writer is false for read-only profiles (HostConfig.ReadOnlyProfile).
	Writer bool
	// Upstream is the <upstream-results> block the first message opens
	// with; empty without dependencies.
	Upstream string
	// Depth is the child's depth: 1 for the parent run's children, 2 for
	// theirs. Parent is the ref of the child that started it, "" at depth 1.
	Depth  int
	Parent string
	// Resumes is the ref whose transcript the child continues or forks
	// (continue_from, fork_from); "" for a fresh session.
	Resumes string
}

// ChildFactory builds a child's agent configuration: its own system prompt
// (profile body or default), provider, model, gate and a fresh tool
// registry whose tools use the task's PathGuard. The host then binds the
// registry to the child's write claim, adds complete_subtask for writers,
// observes the child's events (the factory's Observer still receives them)
// and clears History. Implementations must be safe for concurrent use.
type ChildFactory interface {
	NewChild(ctx context.Context, spec ChildSpec) (agent.Config, error)
}

// ChildFactoryFunc adapts a function to ChildFactory.
type ChildFactoryFunc func(ctx context.Context, spec ChildSpec) (agent.Config, error)

// NewChild calls f.
func (f ChildFactoryFunc) NewChild(ctx context.Context, spec ChildSpec) (agent.Config, error) {
	return f(ctx, spec)
}

// Receipts are what the host itself observed a child do.
type Receipts struct {
	Commands   []CommandReceipt `json:"commands,omitempty"`
	Written    []string         `json:"written,omitempty"` // workspace-relative
	Read       []string         `json:"read,omitempty"`
	Violations []string         `json:"violations,omitempty"` // refused writes outside the claim
}

// CommandReceipt is one bash command the child ran; Exit is -1 when the
// result did not say.
type CommandReceipt struct {
	Command string `json:"command"`
	Exit    int    `json:"exit"`
}

// childRun is one child's live bookkeeping.
type childRun struct {
	spec  ChildSpec
	claim []string // resolved absolute claim roots; nil = whole workspace
	// readOnly keeps only read-only tools: a child of a read-only child
	// may not write whatever its profile says.
	readOnly bool
	parent   *childRun // nil at depth 1

	mu       sync.Mutex
	receipts Receipts
	report   *CompletionReport
	cost     spend
	// holds says the child holds one of the host's slots; awaiting counts
	// its task and fleet calls in flight (slots.go).
	holds    bool
	awaiting int
}

// inClaim reports whether abs lies in the claim; no explicit claim means
// the whole workspace.
func (r *childRun) inClaim(abs, workspace string) bool {
	if len(r.claim) == 0 {
		return within(abs, workspace)
	}
	for _, c := range r.claim {
		if within(abs, c) {
			return true
		}
	}
	return false
}

func (r *childRun) addViolation(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.receipts.Violations = append(r.receipts.Violations, p)
}

// observe records receipts from the child's finished tool calls.
func (h *Host) observeChild(run *childRun, e agent.Event) {
	switch e.Type {
	case agent.EventUsage:
		if usd := priceEvent(h.cfg.Price, e); usd > 0 {
			run.cost.add(usd)
			h.spent.add(usd)
		}
	case agent.EventToolStarted:
		h.toolCalls.Add(1)
	case agent.EventToolFinished:
		if e.Call == nil || e.IsError {
			return
		}
		var args map[string]json.RawMessage
		if json.Unmarshal([]byte(e.Call.Arguments), &args) != nil {
			return
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(args[k], &s)
			return s
		}
		run.mu.Lock()
		defer run.mu.Unlock()
		switch keys := h.cfg.PathArgs[e.Call.Name]; {
		case e.Call.Name == "bash":
			run.receipts.Commands = append(run.receipts.Commands, CommandReceipt{Command: strings.TrimSpace(str("command")), Exit: exitCode(e.Result)})
		case keys != nil:
			for _, k := range keys {
				if p := str(k); p != "" {
					if r, err := h.resolve(p); err == nil {
						rel := h.relPath(r)
						run.receipts.Written = append(run.receipts.Written, rel)
						h.noteWrite(rel, run.spec.Ref)
					}
				}
			}
		default:
			if p := str("path"); p != "" {
				if r, err := h.resolve(p); err == nil {
					run.receipts.Read = append(run.receipts.Read, h.relPath(r))
				}
			}
		}
	}
}

// exitCode reads the "exit code: N" line the bash tool ends its result with.
func exitCode(result string) int {
	i := strings.LastIndex(result, "exit code: ")
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(result[i+len("exit code: "):]))
	if err != nil {
		return -1
	}
	return n
}

// childOutcome is how a child ended.
type childOutcome struct {
	state  NodeState
	reason string
	record *ChildRecord
}

const completionContract = "When you are done, call complete_subtask with your status (complete, partial or failed), a summary, " +
	"each acceptance criterion you were held to with its evidence (the exact commands you ran, or the paths you changed), " +
	"and anything left unresolved. The host checks every citation against what it saw you do; unbacked claims are lowered. " +
	"Then give a short final answer."

// noteWrite counts a child's write for subagent_mutations and, the first
// time a second child writes the same path, duplicate_work_paths.
func (h *Host) noteWrite(rel, ref string) {
	h.mutations.Add(1)
	h.writersMu.Lock()
	defer h.writersMu.Unlock()
	first, seen := h.writers[rel]
	switch {
	case !seen:
		h.writers[rel] = ref
	case first != "" && first != ref:
		h.writers[rel] = "" // counted once, however many more write it
		h.duplicates.Add(1)
	}
}

// firstMessage is the child's first user turn: workspace, the nesting
// context, upstream answers, the task text, and the completion contract
// for writers.
func (h *Host) firstMessage(spec ChildSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<workspace-context>\nworkspace root: %s\n", h.workdir)
	if spec.Writer && len(spec.WritePaths) > 0 {
		fmt.Fprintf(&b, "you may write only under: %s\n", strings.Join(spec.WritePaths, ", "))
	}
	b.WriteString("</workspace-context>\n\n")
	if sc := h.subagentContext(spec); sc != "" {
		b.WriteString(sc + "\n\n")
	}
	if spec.Upstream != "" {
		b.WriteString(spec.Upstream + "\n\n")
	}
	b.WriteString(spec.Prompt)
	if spec.Writer {
		b.WriteString("\n\n" + completionContract)
	}
	return b.String()
}

// Capsule is what a child was given (seed §3.13): references and digests
// only, never copied parent context. Its hash is the child's CapsuleHash.
type Capsule struct {
	Workspace      string   `json:"workspace"`
	SystemPrompt   string   `json:"system_prompt_sha256"`
	Tools          []string `json:"tools"`
	ToolSchemas    string   `json:"tool_schema_sha256"`
	Model          string   `json:"model"`
	RequestedModel string   `json:"requested_model,omitempty"`
	Effort         string   `json:"effort,omitempty"`
	Profile        string   `json:"profile"`
	Writer         bool     `json:"writer"`
	WritePaths     []string `json:"write_paths"`
	FirstMessage   string   `json:"first_message_sha256"`
	// Parent is the ref of the child that started this one, Depth its
	// depth; Resumes the ref whose transcript it continued or forked.
	Parent  string `json:"parent,omitempty"`
	Depth   int    `json:"depth"`
	Resumes string `json:"resumes,omitempty"`
	// Inherited is false everywhere but upstream on an item a depends_on
	// edge fed: nothing else reaches a child implicitly.
	Inherited map[string]bool `json:"inherited"`
}

func digest(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }

// newCapsule records what a child is given; Hash is its stable identity.
func newCapsule(workdir string, cfg agent.Config, reg *agent.ToolRegistry, spec ChildSpec, first string) *Capsule {
	schemas, _ := json.Marshal(reg.Schemas())
	return &Capsule{Workspace: workdir, SystemPrompt: digest(cfg.SystemPrompt), Tools: reg.Names(), ToolSchemas: digest(string(schemas)),
		Model: cfg.Model, RequestedModel: spec.Model, Effort: cfg.Effort, Profile: spec.Profile, Writer: spec.Writer, WritePaths: spec.WritePaths,
		FirstMessage: digest(first), Parent: spec.Parent, Depth: spec.Depth, Resumes: spec.Resumes,
		Inherited: map[string]bool{"upstream": spec.Upstream != "", "parent_conversation": false, "goal": false, "memory": false}}
}

// Hash is the capsule's stable identity.
func (c *Capsule) Hash() string {
	raw, _ := json.Marshal(c)
	return digest(string(raw))
}

// maxKeptHistory bounds the transcript a record keeps for continue_from
// and fork_from, in bytes of JSON; a longer one is not kept.
const maxKeptHistory = 256 << 10

// childOpts is how the scheduler runs one child.
type childOpts struct {
	claim    []string     // resolved; nil = whole workspace
	readOnly bool         // only read-only tools, whatever the profile
	parent   *childRun    // nil at depth 1
	prior    *ChildRecord // the transcript continued or forked; nil for a fresh session
}

// runChild builds, binds and runs one child, then adjudicates its claim.
func (h *Host) runChild(ctx context.Context, spec ChildSpec, o childOpts) (out childOutcome) {
	start := h.cfg.Now()
	rec := &ChildRecord{Ref: spec.Ref, FleetID: spec.FleetID, ID: spec.ID, Parent: spec.Parent, Depth: spec.Depth}
	run := &childRun{spec: spec, claim: o.claim, readOnly: o.readOnly, parent: o.parent}
	defer func() {
		if p := recover(); p != nil {
			out = childOutcome{state: NodeFailed, reason: "unclassified"}
			rec.Answer = fmt.Sprintf("the sub-agent crashed: %v", p)
		}
		rec.State, rec.Reason = out.state, out.reason
		rec.Duration = max(h.cfg.Now().Sub(start), 0)
		rec.Finished = h.cfg.Now()
		out.record = rec
		h.record(rec)
		h.passUp(run, rec.Receipts)
	}()
	cfg, err := h.cfg.Factory.NewChild(ctx, spec)
	if err != nil {
		rec.Answer = "the sub-agent could not be built: " + err.Error()
		return childOutcome{state: NodeFailed, reason: agent.Reason(err)}
	}
	reg, err := h.bindTools(cfg.Tools, run)
	if err != nil {
		rec.Answer = err.Error()
		return childOutcome{state: NodeFailed, reason: "unclassified"}
	}
	if spec.Depth < h.cfg.MaxDepth {
		for _, t := range h.scopedTools(run) {
			if err := reg.Add(t); err != nil {
				rec.Answer = err.Error()
				return childOutcome{state: NodeFailed, reason: "unclassified"}
			}
		}
	}
	cfg.Tools, cfg.History = reg, nil
	factoryObs := cfg.Observer
	cfg.Observer = func(e agent.Event) {
		h.observeChild(run, e)
		if factoryObs != nil {
			factoryObs(e)
		}
	}
	first := h.firstMessage(spec)
	if o.prior != nil {
		// A resumed session already has its context: the prompt is the
		// next turn of its conversation.
		cfg.History = o.prior.History
		first = spec.Prompt
		if spec.Writer {
			first += "\n\n" + completionContract
		}
	}
	rec.Capsule = newCapsule(h.workdir, cfg, reg, spec, first)
	rec.CapsuleHash = rec.Capsule.Hash()
	ag, err := agent.New(cfg)
	if err != nil {
		rec.Answer = err.Error()
		return childOutcome{state: NodeFailed, reason: "unclassified"}
	}
	if err := h.hold(ctx, run); err != nil {
		rec.Answer = "the sub-agent was stopped before it started"
		return childOutcome{state: NodeFailed, reason: "interrupted"}
	}
	defer h.unhold(run)
	h.runs.Add(1)
	if spec.Depth > 1 {
		h.nested.Add(1)
	}
	h.emit(agent.Event{Type: EventSubagentStarted, Data: SubagentEvent{FleetID: spec.FleetID, ID: spec.ID, Ref: spec.Ref, CapsuleHash: rec.CapsuleHash,
		Parent: spec.Parent, Depth: spec.Depth}})
	res := ag.Run(ctx, first)
	rec.Tokens = res.Usage.Prompt + res.Usage.Completion
	rec.Cost = run.cost.total()
	if hist := ag.Messages(); historySize(hist) <= maxKeptHistory {
		rec.History = hist
	}

	run.mu.Lock()
	rec.Receipts = run.receipts
	report := run.report
	run.mu.Unlock()
	switch {
	case report != nil:
		h.adjudicate(report, rec.Receipts)
		rec.Report = report
	case spec.Writer:
		h.proseOnly.Add(1)
	}
	rec.Answer = composeAnswer(res.FinalAnswer, report, rec.Receipts)
	switch {
	case res.Outcome == agent.OutcomeInterrupted:
		out = childOutcome{state: NodeFailed, reason: "interrupted"}
	case res.Outcome != agent.OutcomeSucceeded:
		out = childOutcome{state: NodeFailed, reason: agent.Reason(res.Err)}
		if res.Err != nil {
			rec.Answer += "\n\nthe sub-agent stopped: " + string(res.Outcome)
		}
	case report != nil && report.Status == subtaskFailed:
		out = childOutcome{state: NodeFailed, reason: "unclassified"}
	default:
		out = childOutcome{state: NodeDone}
	}
	h.emit(agent.Event{Type: EventSubagentFinished, Data: SubagentEvent{FleetID: spec.FleetID, ID: spec.ID, Ref: spec.Ref,
		CapsuleHash: rec.CapsuleHash, State: out.state, Reason: out.reason, Tokens: rec.Tokens, Cost: rec.Cost, Parent: spec.Parent, Depth: spec.Depth}})
	return out
}

func historySize(h []agent.Message) int {
	n := 0
	for _, m := range h {
		n += len(m.Content) + len(m.RawContent) + len(m.ProviderState) + 64
		for _, c := range m.ToolCalls {
			n += len(c.Arguments) + len(c.Name) + len(c.ID)
		}
	}
	return n
}
