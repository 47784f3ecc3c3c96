package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
)

// ErrWorkspaceBusy means another task of the same workspace is running: at
// most one task changes a workspace's repository at a time.
var ErrWorkspaceBusy = errors.New("store: another task of the workspace is running")

// ClaimTask moves task id from one of from to running for owner, like
// SetTaskState, but only while no other task of the same named workspace
// is running; otherwise it returns ErrWorkspaceBusy and changes nothing.
// Tasks without a workspace (scratch directories) are never held back. The
// check and the change are one transaction, serialized per workspace
// across nodes. announce, when not nil, gives the events to append to the
// task's log with the claim, from the claimed task (its attempt, say).
func (s *Store) ClaimTask(ctx context.Context, id string, from []State, owner string, announce func(Task) []EventInput) (Task, error) {
	var claimed Task
	err := s.inTx(ctx, func(tx txn) error {
		t, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		if t.Workspace != "" {
			if s.dialect == dialectPostgres {
				// Two claims of different tasks would not see each other's
				// uncommitted update: serialize them per workspace.
				if _, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(?)", workspaceLockKey(t.Workspace)); err != nil {
					return fmt.Errorf("store: lock workspace %s: %w", t.Workspace, err)
				}
			}
			var busy int
			err := tx.queryRow(ctx, "SELECT COUNT(*) FROM tasks WHERE workspace = ? AND state = ? AND id <> ?",
				t.Workspace, string(StateRunning), id).Scan(&busy)
			if err != nil {
				return fmt.Errorf("store: check workspace %s: %w", t.Workspace, err)
			}
			if busy > 0 {
				return ErrWorkspaceBusy
			}
		}
		claimed, err = s.setTaskState(ctx, tx, id, from, StateRunning, &StateOpts{LeaseOwner: &owner})
		if err != nil || announce == nil {
			return err
		}
		evs, err := s.newEvents(id, announce(claimed))
		if err != nil {
			return err
		}
		return appendEventsTx(ctx, tx, evs)
	})
	return claimed, err
}

// workspaceLockKey is the advisory lock of a workspace's claims.
func workspaceLockKey(workspace string) int64 {
	h := fnv.New64a()
	h.Write([]byte("reasonix/workspace/" + workspace))
	return int64(h.Sum64())
}
