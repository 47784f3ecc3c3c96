package runner

import (
	"context"
	"runtime/debug"
	"time"

	"reasonix/runner/internal/cluster"
	"reasonix/runner/store"
)

// NodeInfo is a node as `reasonix nodes` and GET /api/v1/nodes show it:
// its row, whether it is Stale (not stopped, silent for StaleAfter: it
// died, and its tasks move to other nodes) and the tasks it runs.
type NodeInfo = cluster.NodeInfo

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
	return cluster.List(ctx, st, staleAfter, now)
}

// NodeID returns this machine's node id, kept in <dataDir>/node-id and
// created (0600) on first use, so a restarted service recognises the tasks
// it was running when it died.
func NodeID(dataDir string) (string, error) { return cluster.NodeID(dataDir) }

// nodeLife is this node's part in the cluster (package cluster): its
// heartbeat, the hand-over of running tasks and the scratch directories
// that travel with them. Each piece is handed what it needs, not the
// service.
type nodeLife struct {
	beat    *cluster.Heartbeat
	hand    *cluster.HandOver
	scratch *cluster.Scratch
}

// newNodeLife builds s's part in the cluster; New calls it once.
func newNodeLife(s *Service) nodeLife {
	ev := clusterEvents{s}
	var dir func(string) string
	if f, ok := s.cfg.Workspaces.(ScratchFinder); ok {
		dir = f.ScratchDir
	}
	scratch := cluster.NewScratch(cluster.ScratchConfig{
		Store: s.st, Node: s.node, MoveLimit: s.cfg.ScratchMoveLimit, Wait: s.cfg.ScratchWait,
		Interval: s.cfg.ControlInterval, StaleAfter: s.cfg.StaleAfter, Events: ev,
		Runs: func(id string) bool { return s.runFor(id) != nil }, Dir: dir, Claiming: &s.scratchMu,
		Now: s.now, Log: s.log,
	})
	return nodeLife{
		beat: cluster.NewHeartbeat(cluster.HeartbeatConfig{
			Store: s.st, Node: store.Node{ID: s.node, Version: s.cfg.Version, Addr: s.cfg.Addr, MaxTasks: s.maxConcurrent()},
			Interval: s.cfg.HeartbeatInterval, Beside: []func(context.Context){scratch.Answer},
			StaleAfter: s.cfg.StaleAfter, Others: scratch.Others, Now: s.now, Log: s.log,
		}),
		hand: cluster.NewHandOver(cluster.HandOverConfig{
			Store: s.st, Node: s.node, StaleAfter: s.cfg.StaleAfter, Events: ev, Hub: s.hub,
			Interrupt: s.interruptStale, LostState: s.lostState, Now: s.now, Log: s.log,
		}),
		scratch: scratch,
	}
}

// clusterEvents is the service's event log as package cluster writes it.
type clusterEvents struct{ s *Service }

func (e clusterEvents) Emit(ctx context.Context, id, typ string, payload any) {
	e.s.emitLogged(ctx, id, typ, payload)
}

func (e clusterEvents) Announce(id string, evs ...cluster.Event) []store.EventInput {
	out := make([]event, len(evs))
	for i, ev := range evs {
		out[i] = event{ev.Type, ev.Payload}
	}
	return e.s.announce(id, out...)
}

// stopNode ends the heartbeat and records the node stopped.
func (s *Service) stopNode(ctx context.Context) { s.life.beat.Stop(ctx) }

func (s *Service) beatNode(ctx context.Context, state store.NodeState) error {
	return s.life.beat.Beat(ctx, state)
}

// leads reports whether River elected this node's queue leader, which is
// where once-per-cluster maintenance (see startMaintenance) runs.
func (s *Service) leads(ctx context.Context) bool { return cluster.Leads(ctx, s.st, s.node, s.log) }

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
