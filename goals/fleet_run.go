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
	item    FleetItem
	status  NodeStatus
	writer  bool
	claim   []string // resolved; nil with writer = whole workspace
	answer  string
	waiting int // dependencies not yet done
}

type finished struct {
	idx int
	out childOutcome
}

// runGraph schedules g: items start when their dependencies are done,
// under the concurrency and writer limits, never alongside an overlapping
// write claim. A failure skips its downstream branch with its reason.
func (h *Host) runGraph(ctx context.Context, g *Graph) (FleetResult, error) {
	fleetID := "fleet-" + strconv.FormatInt(h.fleets.Add(1), 10)
	nodes := make([]*node, len(g.Items))
	for i, it := range g.Items {
		n := &node{item: it, status: NodeStatus{ID: it.ID, State: NodePending, DependsOn: it.DependsOn}, waiting: len(g.deps[i])}
		switch {
		case it.AdoptRef != "":
			rec, ok := h.lookup(it.AdoptRef)
			if !ok || rec.State != NodeDone {
				return FleetResult{}, fmt.Errorf("%w: item %q adopts %q, which is not a completed sub-agent of this conversation", ErrPreflight, it.ID, it.AdoptRef)
			}
			n.answer = rec.Answer
			n.status.Ref, n.status.Summary = rec.Ref, "adopted "+rec.Ref
		default:
			n.writer = h.cfg.ReadOnlyProfile == nil || !h.cfg.ReadOnlyProfile(it.Profile)
			for _, p := range it.WritePaths {
				r, err := h.resolve(p)
				if err == nil && !within(r, h.workdir) {
					err = fmt.Errorf("it resolves to %s, outside the workspace", r)
				}
				if err != nil {
					return FleetResult{}, fmt.Errorf("%w: item %q: write path %q: %v", ErrPreflight, it.ID, p, err)
				}
				n.claim = append(n.claim, r)
			}
		}
		nodes[i] = n
	}
	s := &scheduler{h: h, g: g, id: fleetID, nodes: nodes, done: make(chan finished)}
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
	halted  string // set by fail_fast or cancellation: the reason pending nodes are skipped with
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
	spec := ChildSpec{FleetID: s.id, ID: n.item.ID, Ref: n.status.Ref, Prompt: n.item.Prompt, Profile: n.item.Profile,
		Model: n.item.Model, Effort: n.item.Effort, WritePaths: n.item.WritePaths, Writer: n.writer, Upstream: upstreamBlock(ups, s.h.cfg.UpstreamBudget)}
	claim := n.claim
	go func() {
		s.done <- finished{idx: i, out: s.h.runChild(ctx, spec, claim)}
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
	snap := FleetSnapshot{FleetID: s.id, Nodes: make([]NodeStatus, len(s.nodes))}
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
