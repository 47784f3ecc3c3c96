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

	mu       sync.Mutex
	receipts Receipts
	report   *CompletionReport
	cost     spend
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
						run.receipts.Written = append(run.receipts.Written, h.relPath(r))
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

// firstMessage is the child's first user turn: workspace, upstream
// answers, the task text, and the completion contract for writers.
func (h *Host) firstMessage(spec ChildSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<workspace-context>\nworkspace root: %s\n", h.workdir)
	if spec.Writer && len(spec.WritePaths) > 0 {
		fmt.Fprintf(&b, "you may write only under: %s\n", strings.Join(spec.WritePaths, ", "))
	}
	b.WriteString("</workspace-context>\n\n")
	if spec.Upstream != "" {
		b.WriteString(spec.Upstream + "\n\n")
	}
	b.WriteString(spec.Prompt)
	if spec.Writer {
		b.WriteString("\n\n" + completionContract)
	}
	return b.String()
}

// capsuleHash is the stable identity of what a child was given: references
// and digests only, never the parent's context.
func capsuleHash(workdir string, cfg agent.Config, reg *agent.ToolRegistry, spec ChildSpec, first string) string {
	digest := func(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }
	schemas, _ := json.Marshal(reg.Schemas())
	capsule := struct {
		Workspace    string          `json:"workspace"`
		SystemPrompt string          `json:"system_prompt_sha256"`
		Tools        []string        `json:"tools"`
		ToolSchemas  string          `json:"tool_schema_sha256"`
		Model        string          `json:"model"`
		Effort       string          `json:"effort,omitempty"`
		Profile      string          `json:"profile"`
		WritePaths   []string        `json:"write_paths"`
		FirstMessage string          `json:"first_message_sha256"`
		Inherited    map[string]bool `json:"inherited"`
	}{workdir, digest(cfg.SystemPrompt), reg.Names(), digest(string(schemas)), cfg.Model, cfg.Effort, spec.Profile, spec.WritePaths,
		digest(first), map[string]bool{"upstream": spec.Upstream != "", "parent_conversation": false, "goal": false, "memory": false}}
	raw, _ := json.Marshal(capsule)
	return digest(string(raw))
}

// runChild builds, binds and runs one child, then adjudicates its claim.
func (h *Host) runChild(ctx context.Context, spec ChildSpec, claim []string) (out childOutcome) {
	start := h.cfg.Now()
	rec := &ChildRecord{Ref: spec.Ref, FleetID: spec.FleetID, ID: spec.ID}
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
	}()
	run := &childRun{spec: spec, claim: claim}
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
	cfg.Tools, cfg.History = reg, nil
	factoryObs := cfg.Observer
	cfg.Observer = func(e agent.Event) {
		h.observeChild(run, e)
		if factoryObs != nil {
			factoryObs(e)
		}
	}
	first := h.firstMessage(spec)
	rec.CapsuleHash = capsuleHash(h.workdir, cfg, reg, spec, first)
	ag, err := agent.New(cfg)
	if err != nil {
		rec.Answer = err.Error()
		return childOutcome{state: NodeFailed, reason: "unclassified"}
	}
	h.runs.Add(1)
	h.emit(agent.Event{Type: EventSubagentStarted, Data: SubagentEvent{FleetID: spec.FleetID, ID: spec.ID, Ref: spec.Ref, CapsuleHash: rec.CapsuleHash}})
	res := ag.Run(ctx, first)
	rec.Tokens = res.Usage.Prompt + res.Usage.Completion
	rec.Cost = run.cost.total()

	run.mu.Lock()
	rec.Receipts = run.receipts
	report := run.report
	run.mu.Unlock()
	if report != nil {
		h.adjudicate(report, rec.Receipts)
		rec.Report = report
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
		CapsuleHash: rec.CapsuleHash, State: out.state, Reason: out.reason, Tokens: rec.Tokens, Cost: rec.Cost}})
	return out
}
