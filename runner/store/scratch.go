package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// ScratchArchive is a scratch task's directory as the node that handed it
// over packed it (a gzipped tar), waiting for the next node to unpack it.
type ScratchArchive struct {
	Node      string // who packed it
	Archive   []byte
	CreatedAt time.Time
}

// SaveScratch stores task taskID's scratch archive, replacing an earlier
// one. The caller bounds its size.
func (s *Store) SaveScratch(ctx context.Context, taskID, node string, archive []byte) error {
	_, err := s.db.exec(ctx, `INSERT INTO task_scratch (task_id, node, archive, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET node = excluded.node, archive = excluded.archive, created_at = excluded.created_at`,
		taskID, node, archive, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: save the scratch archive of task %s: %w", taskID, err)
	}
	return nil
}

// Scratch returns task taskID's scratch archive, or an error wrapping
// ErrNotFound when none waits.
func (s *Store) Scratch(ctx context.Context, taskID string) (ScratchArchive, error) {
	var a ScratchArchive
	var at int64
	err := s.db.queryRow(ctx, "SELECT node, archive, created_at FROM task_scratch WHERE task_id = ?", taskID).
		Scan(&a.Node, &a.Archive, &at)
	if isNoRows(err) {
		return ScratchArchive{}, fmt.Errorf("store: scratch archive of task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return ScratchArchive{}, fmt.Errorf("store: read the scratch archive of task %s: %w", taskID, err)
	}
	a.CreatedAt = fromMicros(at)
	return a, nil
}

// DeleteScratch drops task taskID's scratch archive, if any.
func (s *Store) DeleteScratch(ctx context.Context, taskID string) error {
	if _, err := s.db.exec(ctx, "DELETE FROM task_scratch WHERE task_id = ?", taskID); err != nil {
		return fmt.Errorf("store: delete the scratch archive of task %s: %w", taskID, err)
	}
	return nil
}

// ScratchRequest is a request that the node holding a scratch task's
// directory hand it over through the store (SaveScratch).
type ScratchRequest struct {
	Node        string // asked to hand it over
	RequestedAt time.Time
	AnsweredAt  time.Time // zero until answered
}

// RequestScratch asks node for task taskID's scratch directory, unless a
// request is already recorded, and returns the request as it stands.
func (s *Store) RequestScratch(ctx context.Context, taskID, node string) (ScratchRequest, error) {
	if _, err := s.db.exec(ctx, `INSERT INTO scratch_requests (task_id, node, requested_at) VALUES (?, ?, ?)
		ON CONFLICT (task_id) DO NOTHING`, taskID, node, micros(s.now())); err != nil {
		return ScratchRequest{}, fmt.Errorf("store: request the scratch directory of task %s: %w", taskID, err)
	}
	s.asked.signal(node)
	return s.ScratchRequestOf(ctx, taskID)
}

// ScratchAsked returns a channel that receives a signal (coalesced: at
// most one waits) whenever RequestScratch through this Store asks node for
// a directory, and the function that ends the subscription. It saves a
// node's answerer the poll for what this process asks; a request another
// process makes is found only by reading ScratchRequests.
func (s *Store) ScratchAsked(node string) (<-chan struct{}, func()) { return s.asked.subscribe(node) }

// ScratchRequestOf returns the request for task taskID's scratch
// directory, or an error wrapping ErrNotFound when there is none.
func (s *Store) ScratchRequestOf(ctx context.Context, taskID string) (ScratchRequest, error) {
	var r ScratchRequest
	var at int64
	var answered sql.NullInt64
	err := s.db.queryRow(ctx, "SELECT node, requested_at, answered_at FROM scratch_requests WHERE task_id = ?", taskID).
		Scan(&r.Node, &at, &answered)
	if isNoRows(err) {
		return ScratchRequest{}, fmt.Errorf("store: scratch request of task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return ScratchRequest{}, fmt.Errorf("store: read the scratch request of task %s: %w", taskID, err)
	}
	r.RequestedAt, r.AnsweredAt = fromMicros(at), fromNullMicros(answered)
	return r, nil
}

// ScratchRequests lists the tasks whose scratch directory node was asked
// for and has not answered.
func (s *Store) ScratchRequests(ctx context.Context, node string) ([]string, error) {
	rs, err := s.db.query(ctx, "SELECT task_id FROM scratch_requests WHERE node = ? AND answered_at IS NULL ORDER BY requested_at", node)
	if err != nil {
		return nil, fmt.Errorf("store: list scratch requests: %w", err)
	}
	defer rs.Close()
	var ids []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: list scratch requests: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list scratch requests: %w", err)
	}
	return ids, nil
}

// AnswerScratchRequest records that node answered for task taskID's
// scratch directory: its archive is stored (SaveScratch first), or there
// is none to hand over. It records the answer even when nobody asked yet
// (a drain that could not move the directory), so that the node that runs
// the task next does not ask again.
func (s *Store) AnswerScratchRequest(ctx context.Context, taskID, node string) error {
	now := micros(s.now())
	if _, err := s.db.exec(ctx, `INSERT INTO scratch_requests (task_id, node, requested_at, answered_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET node = excluded.node, answered_at = excluded.answered_at`,
		taskID, node, now, now); err != nil {
		return fmt.Errorf("store: answer the scratch request of task %s: %w", taskID, err)
	}
	return nil
}

// DropScratchRequest removes the request for task taskID's scratch
// directory, if any: the task goes ahead without waiting further.
func (s *Store) DropScratchRequest(ctx context.Context, taskID string) error {
	if _, err := s.db.exec(ctx, "DELETE FROM scratch_requests WHERE task_id = ?", taskID); err != nil {
		return fmt.Errorf("store: drop the scratch request of task %s: %w", taskID, err)
	}
	return nil
}

// signals fans a coalesced signal out to the subscribers of a key.
type signals struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func (g *signals) subscribe(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.subs == nil {
		g.subs = map[string]map[chan struct{}]struct{}{}
	}
	if g.subs[key] == nil {
		g.subs[key] = map[chan struct{}]struct{}{}
	}
	g.subs[key][ch] = struct{}{}
	return ch, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.subs[key], ch)
		if len(g.subs[key]) == 0 {
			delete(g.subs, key)
		}
	}
}

func (g *signals) signal(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for ch := range g.subs[key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
