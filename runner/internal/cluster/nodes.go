package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/internal/ids"
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

// Members is the part of the store that lists the nodes and what they run.
type Members interface {
	Nodes(ctx context.Context) ([]store.Node, error)
	RunningTasks(ctx context.Context) ([]store.RunningTask, error)
}

// List lists the nodes sharing the store with the tasks each runs: a node
// not stopped whose last heartbeat is older than staleAfter at now is
// stale.
func List(ctx context.Context, st Members, staleAfter time.Duration, now time.Time) ([]NodeInfo, error) {
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

// Leads reports whether the store's queue elected node its leader, which
// is where once-per-cluster maintenance runs. Not knowing counts as no: a
// pass skipped is made up at the next tick, a pass run twice would not be.
func Leads(ctx context.Context, st interface {
	Leader(ctx context.Context) (string, error)
}, node string, log *slog.Logger) bool {
	id, err := st.Leader(ctx)
	if err != nil {
		if ctx.Err() == nil {
			quiet(log).Warn("runner: read the queue's leader", "err", err)
		}
		return false
	}
	return id == node
}

// nodeIDFile holds a node's id inside the data directory.
const nodeIDFile = "node-id"

// NodeID returns this machine's node id, kept in <dataDir>/node-id and
// created (0600) on first use, so a restarted service recognises the tasks
// it was running when it died.
func NodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, nodeIDFile)
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("runner: read node id: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("runner: node id: %w", err)
	}
	id := "node-" + ids.Hex(8)
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("runner: write node id: %w", err)
	}
	return id, nil
}

// HeartbeatConfig configures a Heartbeat. Store and Interval are required.
type HeartbeatConfig struct {
	Store interface {
		BeatNodeOthers(ctx context.Context, n store.Node, staleAfter time.Duration) (int, error)
	}
	// Node is this node's row: ID, Version, Addr and MaxTasks; the
	// heartbeat fills in its state and start time.
	Node store.Node
	// Interval is the time between two beats.
	Interval time.Duration
	// Beside run for as long as the node lives, draining included, each
	// until its context ends (the answers to scratch requests: other nodes
	// may wait for them).
	Beside []func(ctx context.Context)
	// StaleAfter and Others, when set, are told after each beat how many
	// other nodes beat within StaleAfter (see store.BeatNodeOthers).
	StaleAfter time.Duration
	Others     func(n int)
	Now        func() time.Time // nil is time.Now
	Log        *slog.Logger
}

// Heartbeat keeps this node's row in the nodes table: its own loop, apart
// from the maintenance loops, because it must go on while the node drains.
type Heartbeat struct {
	cfg     HeartbeatConfig
	started time.Time
	stop    context.CancelFunc
	wg      sync.WaitGroup
	state   atomic.Value // store.NodeState
}

// NewHeartbeat builds a heartbeat; Start runs it.
func NewHeartbeat(cfg HeartbeatConfig) *Heartbeat {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	return &Heartbeat{cfg: cfg}
}

// Start records the node running and beats every Interval, and starts
// Beside, until Stop. ctx bounds the first beat only.
func (h *Heartbeat) Start(ctx context.Context) error {
	h.started = h.cfg.Now()
	if err := h.Beat(ctx, store.NodeRunning); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.stop = cancel
	for _, f := range h.cfg.Beside {
		h.wg.Go(func() { f(loopCtx) })
	}
	h.wg.Go(func() {
		t := time.NewTicker(h.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
			}
			state, _ := h.state.Load().(store.NodeState)
			if err := h.Beat(loopCtx, state); err != nil && loopCtx.Err() == nil {
				h.cfg.Log.Warn("runner: node heartbeat", "err", err)
			}
		}
	})
	return nil
}

// Stop ends the heartbeat and Beside, waits for them and records the node
// stopped. A heartbeat never started stops at once.
func (h *Heartbeat) Stop(ctx context.Context) {
	if h.stop == nil {
		return
	}
	h.stop()
	h.wg.Wait()
	if err := h.Beat(context.WithoutCancel(ctx), store.NodeStopped); err != nil {
		h.cfg.Log.Warn("runner: node heartbeat", "err", err)
	}
}

// Beat records the node in state now; later beats keep that state.
func (h *Heartbeat) Beat(ctx context.Context, state store.NodeState) error {
	h.state.Store(state)
	n := h.cfg.Node
	n.State, n.StartedAt = state, h.started
	others, err := h.cfg.Store.BeatNodeOthers(ctx, n, h.cfg.StaleAfter)
	if err == nil && h.cfg.Others != nil {
		h.cfg.Others(others)
	}
	return err
}
