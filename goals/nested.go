package goals

import (
	"fmt"
	"strings"

	"reasonix/agent"
)

// This file holds nested fleets (seed §3.13): a child below the host's
// MaxDepth gets task and fleet of its own. Its children are ordinary
// children of the same Host, one level deeper, addressed and adjudicated
// like any other; what changes is their lineage. A nested child's write
// claim lies inside its parent's, a read-only child's children cannot
// write, its readers see only its own descendants, and what its children
// observably did is passed up to it as receipts, so its own completion
// claim can cite the work it delegated.

// delegationTools are the tools that start sub-agents; --ablate subagent
// removes them.
var delegationTools = []string{"task", "fleet"}

// IsDelegationTool reports whether name starts sub-agents (task, fleet).
func IsDelegationTool(name string) bool {
	for _, n := range delegationTools {
		if n == name {
			return true
		}
	}
	return false
}

// scopedTools are task, fleet and the readers for a child that may
// delegate, bound to its lineage.
func (h *Host) scopedTools(run *childRun) []agent.Tool {
	return []agent.Tool{taskTool{h, run}, fleetTool{h, run}, readResultTool{h, run}, listSubagentsTool{h, run}}
}

// subagentContext is the <subagent-context> block of a child's fresh
// session: where it stands in the tree, whether it may delegate, and the
// explicit inheritance its own children get. Empty for a child at depth 1
// that cannot delegate (a flat fleet), whose first turn is unchanged.
func (h *Host) subagentContext(spec ChildSpec) string {
	canDelegate := spec.Depth < h.cfg.MaxDepth
	if spec.Depth <= 1 && !canDelegate {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<subagent-context>\nyou are a sub-agent at depth %d of at most %d", spec.Depth, h.cfg.MaxDepth)
	if spec.Parent != "" {
		fmt.Fprintf(&b, " (started by sub-agent %s)", spec.Parent)
	}
	b.WriteString("\nyou were given exactly: your system prompt, the workspace root, this task text")
	if spec.Upstream != "" {
		b.WriteString(", the answers of the items you depend on")
	}
	if spec.Writer {
		b.WriteString(", the completion contract")
	}
	b.WriteString("; not the conversation, goal, memory or instruction files of whoever started you\n")
	if !canDelegate {
		b.WriteString("you cannot start sub-agents: do the work yourself\n")
	} else {
		b.WriteString("task and fleet start sub-agents one level below you; they inherit nothing from you either, so each prompt must say everything " +
			"they need, and an answer one of them needs from another travels only over a depends_on edge. Delegation costs several times the tokens " +
			"of doing the work yourself; use it only for large, separable work\n")
		switch {
		case !spec.Writer:
			b.WriteString("you only read, and so do your sub-agents\n")
		case len(spec.WritePaths) > 0:
			fmt.Fprintf(&b, "your sub-agents' write_paths must lie inside yours (%s); omitted, they get yours\n", strings.Join(spec.WritePaths, ", "))
		}
		if spec.Writer {
			b.WriteString("what your sub-agents ran and wrote counts as host-observed evidence for your own completion report\n")
		}
	}
	b.WriteString("</subagent-context>")
	return b.String()
}

// inLineage reports whether rec was started below parent (any record for
// the parent run itself, parent == nil).
func (h *Host) inLineage(rec ChildRecord, parent *childRun) bool {
	if parent == nil {
		return true
	}
	for hops := 0; rec.Parent != "" && hops <= h.cfg.MaxDepth; hops++ {
		if rec.Parent == parent.spec.Ref {
			return true
		}
		up, ok := h.lookup(rec.Parent)
		if !ok {
			return false
		}
		rec = up
	}
	return false
}

// lookupIn is lookup restricted to parent's lineage.
func (h *Host) lookupIn(ref string, parent *childRun) (ChildRecord, bool) {
	rec, ok := h.lookup(ref)
	if !ok || !h.inLineage(rec, parent) {
		return ChildRecord{}, false
	}
	return rec, true
}

// passUp adds what a nested child observably did to its parent's receipts,
// so the parent's completion claim can cite delegated work. Refused writes
// stay with the child that tried them.
func (h *Host) passUp(run *childRun, rc Receipts) {
	p := run.parent
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.receipts.Commands = append(p.receipts.Commands, rc.Commands...)
	p.receipts.Written = append(p.receipts.Written, rc.Written...)
	p.receipts.Read = append(p.receipts.Read, rc.Read...)
}

// nestedClaim decides a nested item's claim from its parent's: a child of
// a read-only child only reads; an item without write_paths takes its
// parent's claim; one with write_paths must stay inside it. A claim that
// leaves the parent's counts as a write-scope violation of the parent.
func (h *Host) nestedClaim(n *node, parent *childRun) error {
	if parent == nil {
		return nil
	}
	if !parent.spec.Writer || parent.readOnly {
		if len(n.item.WritePaths) > 0 {
			return fmt.Errorf("%w: item %q: a read-only sub-agent's sub-agents cannot write, so write_paths must be empty", ErrPreflight, n.item.ID)
		}
		n.writer, n.readOnly = false, true
		return nil
	}
	if len(parent.claim) == 0 || !n.writer {
		return nil
	}
	if len(n.claim) == 0 {
		n.claim, n.writePaths = parent.claim, parent.spec.WritePaths
		return nil
	}
	for k, c := range n.claim {
		if !parent.inClaim(c, h.workdir) {
			h.violations.Add(1)
			parent.addViolation(n.item.WritePaths[k])
			return fmt.Errorf("%w: item %q: write path %q is outside this sub-agent's own write claim (%s)", ErrPreflight, n.item.ID,
				n.item.WritePaths[k], strings.Join(parent.spec.WritePaths, ", "))
		}
	}
	return nil
}

// resume prepares a continue_from or fork_from item: the record must be a
// finished child of this lineage whose transcript was kept; continue_from
// takes only a partial or failed one and keeps its claim, fork_from any,
// with its own claim or else the source's.
func (h *Host) resume(n *node, parent *childRun) error {
	ref, verb := n.item.ContinueFrom, "continues"
	if ref == "" {
		ref, verb = n.item.ForkFrom, "forks"
	}
	if ref == "" {
		return nil
	}
	rec, ok := h.lookupIn(ref, parent)
	switch {
	case !ok:
		return fmt.Errorf("%w: item %q %s %q, which is not a finished sub-agent of this conversation", ErrPreflight, n.item.ID, verb, ref)
	case len(rec.History) == 0 || rec.Capsule == nil:
		return fmt.Errorf("%w: item %q %s %q, whose transcript was not kept; start a fresh sub-agent", ErrPreflight, n.item.ID, verb, ref)
	case n.item.ContinueFrom != "" && !retryable(rec):
		return fmt.Errorf("%w: item %q continues %q, which completed; fork_from starts from a completed one", ErrPreflight, n.item.ID, ref)
	}
	r := rec
	n.prior, n.profile, n.model = &r, rec.Capsule.Profile, rec.Capsule.RequestedModel
	if n.item.ContinueFrom != "" || len(n.writePaths) == 0 {
		n.writePaths = rec.Capsule.WritePaths
	}
	return nil
}

// retryable reports whether a child ended short of complete: failed, or
// done with a claim the host holds below complete.
func retryable(rec ChildRecord) bool {
	return rec.State == NodeFailed || rec.Report != nil && rec.Report.Status != subtaskComplete
}
