package runner

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/runner/store"
)

// NodeInfo is a node as `reasonix nodes` and GET /api/v1/nodes show it.
type NodeInfo struct {
	store.Node
	// Stale is true when a node that is not stopped has sent no heartbeat
	// for StaleAfter: it died, and its tasks move to other nodes.
	Stale bool
	// Running lists the tasks it runs (state running, leased to it).
	Running []string
}

// nodeLife keeps this node's row in the nodes table: its own loop, apart
// from the maintenance loops, because it must go on while the node drains.
type nodeLife struct {
	started time.Time
	stop    context.CancelFunc
	wg      sync.WaitGroup
	state   atomic.Value // store.NodeState
}

// Nodes lists the nodes sharing the store with their heartbeats, running
// tasks, version and which one River elected to run maintenance.
func (s *Service) Nodes(ctx context.Context) ([]NodeInfo, error) {
	nodes, err := ListNodes(ctx, s.st, s.cfg.StaleAfter, s.now())
	if err != nil {
		return nil, mapStoreErr(err, "nodes")
	}
	return nodes, nil
}

// ListNodes is Nodes without a running service (`reasonix nodes` reads the
// store directly): a node not stopped whose last heartbeat is older than
// staleAfter at now is stale.
func ListNodes(ctx context.Context, st *store.Store, staleAfter time.Duration, now time.Time) ([]NodeInfo, error) {
	nodes, err := st.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	running, err := st.RunningTasks(ctx)
	if err != nil {
		return nil, err
	}
	byNode := map[string][]string{}
	for _, t := range running {
		byNode[t.LeaseOwner] = append(byNode[t.LeaseOwner], t.ID)
	}
	out := make([]NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		info := NodeInfo{Node: n, Running: byNode[n.ID],
			Stale: n.State != store.NodeStopped && now.Sub(n.HeartbeatAt) > staleAfter}
		// A dead leader's election row outlives it by up to River's
		// leader TTL (15 s); it leads nothing any more.
		info.Leader = info.Leader && !info.Stale
		out = append(out, info)
	}
	return out, nil
}

// startNode records this node as running and keeps its heartbeat.
func (s *Service) startNode(ctx context.Context) error {
	s.life.started = s.now()
	if err := s.beatNode(ctx, store.NodeRunning); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.life.stop = cancel
	// Scratch directories are handed over for as long as the node lives,
	// draining included: other nodes may wait for them.
	s.life.wg.Go(func() { s.answerScratchRequests(loopCtx) })
	s.life.wg.Add(1)
	go func() {
		defer s.life.wg.Done()
		t := time.NewTicker(s.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
			}
			state, _ := s.life.state.Load().(store.NodeState)
			if err := s.beatNode(loopCtx, state); err != nil && loopCtx.Err() == nil {
				s.log.Warn("runner: node heartbeat", "err", err)
			}
		}
	}()
	return nil
}

// stopNode ends the heartbeat and records the node stopped.
func (s *Service) stopNode(ctx context.Context) {
	if s.life.stop == nil {
		return
	}
	s.life.stop()
	s.life.wg.Wait()
	if err := s.beatNode(context.WithoutCancel(ctx), store.NodeStopped); err != nil {
		s.log.Warn("runner: node heartbeat", "err", err)
	}
}

func (s *Service) beatNode(ctx context.Context, state store.NodeState) error {
	s.life.state.Store(state)
	return s.st.BeatNode(ctx, store.Node{ID: s.node, Version: s.cfg.Version, Addr: s.cfg.Addr,
		State: state, MaxTasks: s.maxConcurrent(), StartedAt: s.life.started})
}

// leads reports whether River elected this node's queue leader, which is
// where once-per-cluster maintenance (see startMaintenance) runs. Not
// knowing counts as no: a pass skipped is made up at the next tick, a pass
// run twice would not be.
func (s *Service) leads(ctx context.Context) bool {
	id, err := s.st.Leader(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("runner: read the queue's leader", "err", err)
		}
		return false
	}
	return id == s.node
}

// buildVersion is the version a node reports when its Config names none:
// the main module's version as the Go toolchain recorded it (a tagged
// `go install`, or a VCS-derived one), else "dev", as a binary built
// without `-X main.version` calls itself. A test binary's is "(devel)",
// so tests and embedders that pass no version show "dev", never a blank.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
