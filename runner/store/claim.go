package store

import (
	"context"
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
	return s.ClaimTaskAt(ctx, id, -1, from, owner, maxParallel, announce)
}

// ClaimTaskAt is ClaimTask for a caller that read the task at attempt
// (-1: not read). On Postgres the claim is then one statement; if the
// task's attempt moved since that read, it returns ErrWorkspaceBusy, and
// the caller reads the task again and retries, as after a busy workspace.
func (s *Store) ClaimTaskAt(ctx context.Context, id string, attempt int, from []State, owner string, maxParallel int, announce func(Task) []EventInput) (Task, error) {
	maxParallel = max(maxParallel, 1)
	if s.dialect == dialectPostgres {
		return s.claimPostgres(ctx, id, attempt, from, owner, maxParallel, announce)
	}
	var claimed Task
	err := s.inTx(ctx, func(tx txn) error {
		// SQLite's transactions take the database's write lock at BEGIN:
		// the read and the change below see every claim before them.
		var (
			state string
			read  int
		)
		if err := tx.queryRow(ctx, "SELECT state, attempt FROM tasks WHERE id = ?", id).Scan(&state, &read); isNoRows(err) {
			return fmt.Errorf("store: task %s: %w", id, ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("store: claim task %s: %w", id, err)
		}
		if !slices.Contains(from, State(state)) {
			return &StateError{TaskID: id, Current: State(state)}
		}
		if attempt >= 0 && attempt != read {
			return ErrWorkspaceBusy
		}
		var err error
		claimed, err = s.claimChange(ctx, tx, id, read, from, owner, maxParallel, announce,
			`(SELECT COUNT(*) FROM tasks o WHERE o.workspace = tasks.workspace AND o.state = ? AND o.id <> tasks.id)`)
		return err
	})
	return claimed, err
}

// claimPostgres is the claim as one statement (after a read of the
// attempt when the caller has none). The guard's count runs in
// reasonix_workspace_running (migration 28), which takes the workspace's
// claim lock, held to the statement's commit, and counts with a snapshot
// taken after it: every claim that held the lock before is seen, and
// those after wait for this one.
func (s *Store) claimPostgres(ctx context.Context, id string, attempt int, from []State, owner string, maxParallel int, announce func(Task) []EventInput) (Task, error) {
	if attempt < 0 {
		var state string
		if err := s.db.queryRow(ctx, "SELECT state, attempt FROM tasks WHERE id = ?", id).Scan(&state, &attempt); isNoRows(err) {
			return Task{}, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
		} else if err != nil {
			return Task{}, fmt.Errorf("store: claim task %s: %w", id, err)
		}
		if !slices.Contains(from, State(state)) {
			return Task{}, &StateError{TaskID: id, Current: State(state)}
		}
	}
	return s.claimChange(ctx, s.db, id, attempt, from, owner, maxParallel, announce,
		`reasonix_workspace_running(tasks.workspace, tasks.id, ?)`)
}

// claimChange is the claim's state change, guarded by the attempt read
// and by count, SQL counting the workspace's other running tasks (its one
// placeholder is the running state).
func (s *Store) claimChange(ctx context.Context, q querier, id string, attempt int, from []State, owner string, maxParallel int,
	announce func(Task) []EventInput, count string) (Task, error) {
	opts := &StateOpts{LeaseOwner: &owner,
		// The attempt read must still be the task's, or the events would
		// name another attempt; a claim in between makes this one busy,
		// and the caller tries again.
		guard:     ` AND attempt = ? AND (workspace = '' OR ` + count + ` < ?)`,
		guardArgs: []any{attempt, string(StateRunning), maxParallel}}
	if announce != nil {
		opts.Events = announce(Task{ID: id, State: StateRunning, Attempt: attempt + 1, LeaseOwner: owner})
	}
	claimed, err := s.setTaskState(ctx, q, id, from, StateRunning, opts)
	if se := (*StateError)(nil); errors.As(err, &se) && slices.Contains(from, se.Current) {
		return Task{}, ErrWorkspaceBusy // the state allowed it: the guard did not
	}
	return claimed, err
}
