package goals

import (
	"context"
	"fmt"
	"strconv"

	"reasonix/agent"
)

// FleetResult is a finished fleet: every node's final status, in item order.
type FleetResult struct {
	FleetID string
	Nodes   []NodeStatus
	// Answered counts nodes that ended done (adopted ones included).
	Answered int
}

// node is one graph item while the fleet runs. Only the scheduler
// goroutine touches it.
type node struct {
	item       FleetItem
	status     NodeStatus
	writer     bool
	readOnly   bool     // a child of a read-only child: only read-only tools
	claim      []string // resolved; nil with writer = whole workspace
	writePaths []string // the claim as the child is told it
	profile    string
	model      string
	prior      *ChildRecord // continue_from / fork_from
	answer     string
	waiting    int // dependencies not yet done
}

type finished struct {
	idx int
	out childOutcome
}

// runGraph schedules g: items start when their dependencies are done,
// under the concurrency and writer limits, never alongside an overlapping
// write claim. A failure skips its downstream branch with its reason.
func (h *Host) runGraph(ctx context.Context, g *Graph, parent *childRun) (FleetResult, error) {
	fleetID := "fleet-" + strconv.FormatInt(h.fleets.Add(1), 10)
	nodes := make([]*node, len(g.Items))
	for i, it := range g.Items {
		n := &node{item: it, status: NodeStatus{ID: it.ID, State: NodePending, DependsOn: it.DependsOn}, waiting: len(g.deps[i]),
			writePaths: it.WritePaths, profile: it.Profile, model: it.Model}
		if it.AdoptRef != "" {
			rec, ok := h.lookupIn(it.AdoptRef, parent)
			if !ok || rec.State != NodeDone {
				return FleetResult{}, fmt.Errorf("%w: item %q adopts %q, which is not a completed sub-agent of this conversation", ErrPreflight, it.ID, it.AdoptRef)
			}
			n.answer = rec.Answer
			n.status.Ref, n.status.Summary = rec.Ref, "adopted "+rec.Ref
			nodes[i] = n
			continue
		}
		if err := h.resume(n, parent); err != nil {
			return FleetResult{}, err
		}
		n.writer = h.cfg.ReadOnlyProfile == nil || !h.cfg.ReadOnlyProfile(n.profile)
		if n.prior != nil && n.prior.Capsule != nil {
			n.writer = n.prior.Capsule.Writer
		}
		for _, p := range n.writePaths {
			r, err := h.resolve(p)
			if err == nil && !within(r, h.workdir) {
				err = fmt.Errorf("it resolves to %s, outside the workspace", r)
			}
			if err != nil {
				return FleetResult{}, fmt.Errorf("%w: item %q: write path %q: %v", ErrPreflight, it.ID, p, err)
			}
			n.claim = append(n.claim, r)
		}
		if err := h.nestedClaim(n, parent); err != nil {
			return FleetResult{}, err
		}
		nodes[i] = n
	}
	depth := 1
	if parent != nil {
		depth = parent.spec.Depth + 1
	}
	s := &scheduler{h: h, g: g, id: fleetID, nodes: nodes, done: make(chan finished), parent: parent, depth: depth}
	defer h.awaitChildren(ctx, parent)()
	// Adopted nodes are done before anything runs; their dependents see them
	// as ordinary completed dependencies.
	for i, n := range nodes {
		if n.item.AdoptRef != "" {
			s.finish(i, childOutcome{state: NodeDone})
		}
	}
	s.emit()
	s.loop(ctx)
	res := FleetResult{FleetID: fleetID}
	for _, n := range nodes {
		res.Nodes = append(res.Nodes, n.status)
		if n.status.State == NodeDone {
			res.Answered++
		}
	}
	return res, nil
}

type scheduler struct {
	h       *Host
	g       *Graph
	id      string
	nodes   []*node
	done    chan finished
	running int
	writers int
	halted  string    // set by fail_fast or cancellation: the reason pending nodes are skipped with
	parent  *childRun // the child that started this fleet; nil for the parent run's
	depth   int       // the depth of this fleet's children
}

func (s *scheduler) loop(ctx context.Context) {
	for {
		if ctx.Err() != nil && s.halted == "" {
			s.halt("interrupted", "not started: the fleet was interrupted")
		}
		s.startReady(ctx)
		if s.running == 0 {
			return
		}
		f := <-s.done
		s.running--
		if s.nodes[f.idx].writer {
			s.writers--
		}
		s.finish(f.idx, f.out)
		s.emit()
	}
}

// startReady starts every ready node the limits allow, in item order.
func (s *scheduler) startReady(ctx context.Context) {
	if s.halted != "" {
		return
	}
	started := false
	for i, n := range s.nodes {
		if n.status.State != NodePending || n.waiting > 0 {
			continue
		}
		if s.running >= s.h.cfg.MaxConcurrency {
			break
		}
		if n.writer && (s.writers >= s.h.cfg.MaxParallelWriters || s.conflicts(n)) {
			continue
		}
		s.start(ctx, i)
		started = true
	}
	if started {
		s.emit()
	}
}

// conflicts reports whether n's claim overlaps a running writer's.
func (s *scheduler) conflicts(n *node) bool {
	for _, o := range s.nodes {
		if o != n && o.status.State == NodeRunning && o.writer && claimsOverlap(n.claim, o.claim) {
			return true
		}
	}
	return false
}

func (s *scheduler) start(ctx context.Context, i int) {
	n := s.nodes[i]
	n.status.State = NodeRunning
	n.status.Ref = newRef()
	s.running++
	if n.writer {
		s.writers++
	}
	var ups []upstreamAnswer
	for _, d := range s.g.deps[i] {
		ups = append(ups, upstreamAnswer{ID: s.nodes[d].item.ID, Answer: s.nodes[d].answer})
	}
	spec := ChildSpec{FleetID: s.id, ID: n.item.ID, Ref: n.status.Ref, Prompt: n.item.Prompt, Profile: n.profile,
		Model: n.model, Effort: n.item.Effort, WritePaths: n.writePaths, Writer: n.writer, Upstream: upstreamBlock(ups, s.h.cfg.UpstreamBudget),
		Depth: s.depth}
	if s.parent != nil {
		spec.Parent = s.parent.spec.Ref
	}
	if n.prior != nil {
		spec.Resumes = n.prior.Ref
	}
	o := childOpts{claim: n.claim, readOnly: n.readOnly, parent: s.parent, prior: n.prior}
	go func() {
		s.done <- finished{idx: i, out: s.h.runChild(ctx, spec, o)}
	}()
}

// finish records a node's end and propagates it to its dependents.
func (s *scheduler) finish(i int, out childOutcome) {
	n := s.nodes[i]
	n.status.State, n.status.Reason = out.state, out.reason
	if r := out.record; r != nil {
		n.answer = r.Answer
		n.status.Duration, n.status.Tokens, n.status.Cost = r.Duration, r.Tokens, r.Cost
		n.status.Summary = preview(r.Answer, 160)
	}
	if out.state == NodeDone {
		for _, j := range s.g.next[i] {
			s.nodes[j].waiting--
		}
		return
	}
	s.skipDownstream(i, out.reason)
	if s.g.FailFast && s.halted == "" {
		s.halt(out.reason, "not started: fail_fast after "+strconv.Quote(n.item.ID)+" failed")
	}
}

// skipDownstream skips every pending node reachable from i, passing on
// the reason.
func (s *scheduler) skipDownstream(i int, reason string) {
	cause := s.nodes[i].item.ID
	stack := append([]int(nil), s.g.next[i]...)
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m := s.nodes[j]; m.status.State == NodePending {
			m.status.State, m.status.Reason = NodeSkipped, reason
			m.status.Summary = "skipped: upstream " + strconv.Quote(cause) + " did not complete"
			stack = append(stack, s.g.next[j]...)
		}
	}
}

// halt stops starting nodes; every pending node is skipped with reason.
func (s *scheduler) halt(reason, summary string) {
	s.halted = reason
	for _, n := range s.nodes {
		if n.status.State == NodePending {
			n.status.State, n.status.Reason, n.status.Summary = NodeSkipped, reason, summary
		}
	}
}

func (s *scheduler) emit() {
	snap := FleetSnapshot{FleetID: s.id, Depth: s.depth, Nodes: make([]NodeStatus, len(s.nodes))}
	if s.parent != nil {
		snap.Parent, snap.ParentFleet, snap.ParentID = s.parent.spec.Ref, s.parent.spec.FleetID, s.parent.spec.ID
	}
	for i, n := range s.nodes {
		snap.Nodes[i] = n.status
	}
	s.h.emit(agent.Event{Type: EventFleetUpdated, Data: snap})
}

// preview is the first line-ish of s, at most n bytes on a rune boundary.
func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return agent.BoundResult(s, n-3) + "..."
}
