package store

import (
	"context"
	"fmt"
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
