package store

import (
	"context"
	"fmt"
	"time"
)

// NodeState is where a `reasonix serve` process is in its life.
type NodeState string

// Node states.
const (
	NodeRunning  NodeState = "running"  // claims and runs tasks
	NodeDraining NodeState = "draining" // stopping: claims nothing, lets running steps finish
	NodeStopped  NodeState = "stopped"  // shut down cleanly
)

// Node is one service process sharing the database.
type Node struct {
	ID          string
	Version     string
	Addr        string // the address it serves its API on, "" when unknown
	State       NodeState
	MaxTasks    int // its max_concurrent_tasks
	StartedAt   time.Time
	HeartbeatAt time.Time
	// Leader is true for the node River elected to run maintenance (read
	// from River's own leader table).
	Leader bool
}

// BeatNode records that node n is alive now, creating its row on first
// use; n.HeartbeatAt is ignored (the store's clock stamps it).
func (s *Store) BeatNode(ctx context.Context, n Node) error {
	_, err := s.BeatNodeOthers(ctx, n, 0)
	return err
}

// BeatNodeOthers is BeatNode, and in the same statement counts the other
// nodes that are not stopped and beat within staleAfter before now (with
// staleAfter 0: none is counted). A node alone needs to look for nothing
// another node might ask of it.
func (s *Store) BeatNodeOthers(ctx context.Context, n Node, staleAfter time.Duration) (int, error) {
	if n.ID == "" {
		return 0, invalid("node id is empty")
	}
	now := s.now()
	since := micros(now.Add(-staleAfter))
	if staleAfter <= 0 {
		since = micros(now) + 1
	}
	var others int
	err := s.db.queryRow(ctx, `INSERT INTO nodes (id, version, addr, state, max_tasks, started_at, heartbeat_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, addr = excluded.addr, state = excluded.state,
			max_tasks = excluded.max_tasks, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at
		RETURNING (SELECT count(*) FROM nodes o WHERE o.id <> ? AND o.state <> ? AND o.heartbeat_at >= ?)`,
		n.ID, n.Version, n.Addr, string(n.State), n.MaxTasks, micros(n.StartedAt), micros(now),
		n.ID, string(NodeStopped), since).Scan(&others)
	if err != nil {
		return 0, fmt.Errorf("store: node heartbeat: %w", err)
	}
	return others, nil
}

// Nodes lists every node that ever shared the database, most recently
// started first, with River's elected leader marked.
func (s *Store) Nodes(ctx context.Context) ([]Node, error) {
	leader, err := s.Leader(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := s.db.query(ctx, `SELECT id, version, addr, state, max_tasks, started_at, heartbeat_at
		FROM nodes ORDER BY started_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list nodes: %w", err)
	}
	defer rs.Close()
	var out []Node
	for rs.Next() {
		var n Node
		var state string
		var started, beat int64
		if err := rs.Scan(&n.ID, &n.Version, &n.Addr, &state, &n.MaxTasks, &started, &beat); err != nil {
			return nil, fmt.Errorf("store: list nodes: %w", err)
		}
		n.State, n.StartedAt, n.HeartbeatAt = NodeState(state), fromMicros(started), fromMicros(beat)
		n.Leader = n.ID == leader && n.State != NodeStopped
		out = append(out, n)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list nodes: %w", err)
	}
	return out, nil
}

// Leader returns the id of the queue client River elected leader, "" when
// none is. River's own elector decides (one row in river_leader, renewed by
// the leader, taken over by another node once it expires); reading it lets
// maintenance that must run once per cluster (sweeps, schedules) run on that
// node only.
func (s *Store) Leader(ctx context.Context) (string, error) {
	var id string
	err := s.db.queryRow(ctx, "SELECT leader_id FROM river_leader").Scan(&id)
	if isNoRows(err) {
		// A queue that stopped River while idle, alone (see
		// Queue.doze), leads: nobody else can.
		if q := s.dozer.Load(); q != nil && q.id != "" {
			return q.id, nil
		}
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: read the queue's leader: %w", err)
	}
	return id, nil
}
