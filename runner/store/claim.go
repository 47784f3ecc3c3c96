package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// ErrWorkspaceBusy means the workspace already runs as many tasks as the
// claim allows (its max_parallel): the task waits for one of them to end.
var ErrWorkspaceBusy = errors.New("store: the workspace runs as many tasks as it may")

// ClaimTask moves task id from one of from to running for owner, like
// SetTaskState, but only while fewer than maxParallel other tasks of the
// same named workspace are running, on any node; otherwise it returns
// ErrWorkspaceBusy and changes nothing. maxParallel below 1 counts as 1.
// Tasks without a workspace (scratch directories) are never held back.
//
// The count and the change are one transaction, serialized per workspace
// across nodes, so no number of concurrent claims overshoots the limit.
// Each node passes its own limit: nodes configured differently each keep
// theirs. announce, when not nil, gives the events to append to the task's
// log with the claim; it sees the task as the claim makes it (ID, State,
// Attempt and LeaseOwner; the rest is zero), before the change is written.
func (s *Store) ClaimTask(ctx context.Context, id string, from []State, owner string, maxParallel int, announce func(Task) []EventInput) (Task, error) {
	maxParallel = max(maxParallel, 1)
	var claimed Task
	err := s.inTx(ctx, func(tx txn) error {
		// One read that, on Postgres, also takes the workspace's claim
		// lock: the change below is a statement of its own, so its
		// snapshot (read committed) sees every claim that held the lock
		// before, and those after wait for this commit. SQLite needs no
		// lock: its transactions take the database's write lock at BEGIN.
		read := "SELECT state, attempt, NULL FROM tasks WHERE id = ?"
		if s.dialect == dialectPostgres {
			read = `SELECT state, attempt, CASE WHEN workspace <> '' THEN
					pg_advisory_xact_lock(hashtextextended('reasonix/workspace/' || workspace, 0))::text END
				FROM tasks WHERE id = ?`
		}
		var (
			state   string
			attempt int
			locked  sql.NullString
		)
		if err := tx.queryRow(ctx, read, id).Scan(&state, &attempt, &locked); isNoRows(err) {
			return fmt.Errorf("store: task %s: %w", id, ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("store: claim task %s: %w", id, err)
		}
		if !slices.Contains(from, State(state)) {
			return &StateError{TaskID: id, Current: State(state)}
		}
		opts := &StateOpts{LeaseOwner: &owner,
			// The attempt read above must still be the task's, or the
			// events would name another attempt; a claim in between
			// makes this one busy, and the caller tries again.
			guard: ` AND attempt = ? AND (workspace = '' OR
				(SELECT COUNT(*) FROM tasks o WHERE o.workspace = tasks.workspace AND o.state = ? AND o.id <> tasks.id) < ?)`,
			guardArgs: []any{attempt, string(StateRunning), maxParallel}}
		if announce != nil {
			opts.Events = announce(Task{ID: id, State: StateRunning, Attempt: attempt + 1, LeaseOwner: owner})
		}
		var err error
		claimed, err = s.setTaskState(ctx, tx, id, from, StateRunning, opts)
		if se := (*StateError)(nil); errors.As(err, &se) && slices.Contains(from, se.Current) {
			return ErrWorkspaceBusy // the state allowed it: the guard did not
		}
		return err
	})
	return claimed, err
}
