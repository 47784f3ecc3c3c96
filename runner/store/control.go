package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Requeue gives task id a new River job and moves it to queued, in one
// transaction, if and only if its state is one of from. It is how an
// interrupted task is resumed and a finished one continued: the old job is
// done (or will find that it is no longer the task's job), the new one runs
// the task again. evs are appended to the task's log in the same
// transaction (see StateOpts.Events). It returns the updated task, or a
// *StateError.
func (s *Store) Requeue(ctx context.Context, id string, from []State, evs ...EventInput) (Task, error) {
	if len(from) == 0 {
		return Task{}, invalid("no from states for task %s", id)
	}
	events, err := s.newEvents(id, evs)
	if err != nil {
		return Task{}, err
	}
	var task Task
	err = s.inTx(ctx, func(tx txn) error {
		cur, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		ok := false
		for _, f := range from {
			ok = ok || cur.State == f
		}
		if !ok {
			return &StateError{TaskID: id, Current: cur.State}
		}
		res, err := s.river.insertTx(ctx, tx, TaskArgs{TaskID: id, Goal: cur.Goal})
		s.jobs.signal("") // see Queue.doze
		if err != nil {
			return fmt.Errorf("store: insert job: %w", err)
		}
		args := []any{string(StateQueued), res.Job.ID, micros(s.now()), id}
		for _, f := range from {
			args = append(args, string(f))
		}
		task, err = scanTask(tx.queryRow(ctx, `UPDATE tasks SET state = ?, job_id = ?, updated_at = ?,
				cancel_requested = 0, finished_at = NULL
			WHERE id = ? AND state IN (?`+strings.Repeat(", ?", len(from)-1)+`) RETURNING `+taskCols, args...))
		if isNoRows(err) {
			return &StateError{TaskID: id, Current: cur.State}
		}
		if err != nil {
			return fmt.Errorf("store: requeue task %s: %w", id, err)
		}
		return appendEventsTx(ctx, tx, events)
	})
	if err != nil {
		return Task{}, err
	}
	return task, nil
}

// RequestCancel records that task id should stop, for a worker on another
// node that polls CancelRequested. It returns an error wrapping ErrNotFound
// for an unknown task.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	n, err := s.db.exec(ctx, "UPDATE tasks SET cancel_requested = 1 WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("store: request cancel of %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	return nil
}

// ControlState is what a running task's control loop looks at each tick:
// whether a cancel was requested and whether its inbox holds untaken
// messages. One read, so a tick with nothing to do (the common case) costs
// one round trip rather than a read plus an inbox transaction.
func (s *Store) ControlState(ctx context.Context, id string) (cancel, inbox bool, err error) {
	var c, n int
	err = s.db.queryRow(ctx, `SELECT cancel_requested,
		CASE WHEN EXISTS (SELECT 1 FROM task_inbox WHERE task_id = ? AND consumed_at IS NULL) THEN 1 ELSE 0 END
		FROM tasks WHERE id = ?`, id, id).Scan(&c, &n)
	if isNoRows(err) {
		return false, false, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return false, false, fmt.Errorf("store: read control state of %s: %w", id, err)
	}
	return c != 0, n != 0, nil
}

// Heartbeat stamps now on the given running tasks, proving that their node
// is alive (see RunningTasks).
func (s *Store) Heartbeat(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{micros(s.now())}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.db.exec(ctx, "UPDATE tasks SET heartbeat_at = ? WHERE id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", args...)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// RunningTask is a task in state running, with who runs it and when its
// node last proved to be alive.
type RunningTask struct {
	ID          string
	LeaseOwner  string
	HeartbeatAt time.Time // zero when never stamped
	UpdatedAt   time.Time
}

// RunningTasks lists every task in state running, for crash recovery.
func (s *Store) RunningTasks(ctx context.Context) ([]RunningTask, error) {
	rs, err := s.db.query(ctx, "SELECT id, lease_owner, heartbeat_at, updated_at FROM tasks WHERE state = ? ORDER BY id",
		string(StateRunning))
	if err != nil {
		return nil, fmt.Errorf("store: list running tasks: %w", err)
	}
	defer rs.Close()
	var out []RunningTask
	for rs.Next() {
		var t RunningTask
		var hb sql.NullInt64
		var upd int64
		if err := rs.Scan(&t.ID, &t.LeaseOwner, &hb, &upd); err != nil {
			return nil, fmt.Errorf("store: list running tasks: %w", err)
		}
		t.HeartbeatAt, t.UpdatedAt = fromNullMicros(hb), fromMicros(upd)
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list running tasks: %w", err)
	}
	return out, nil
}

// TaskCount is how many tasks are in one state from one source.
type TaskCount struct {
	State  State
	Source Source
	N      int
}

// CountTasks counts tasks by state and source (for metrics).
func (s *Store) CountTasks(ctx context.Context) ([]TaskCount, error) {
	rs, err := s.db.query(ctx, "SELECT state, source, COUNT(*) FROM tasks GROUP BY state, source")
	if err != nil {
		return nil, fmt.Errorf("store: count tasks: %w", err)
	}
	defer rs.Close()
	var out []TaskCount
	for rs.Next() {
		var c TaskCount
		var st, src string
		if err := rs.Scan(&st, &src, &c.N); err != nil {
			return nil, fmt.Errorf("store: count tasks: %w", err)
		}
		c.State, c.Source = State(st), Source(src)
		out = append(out, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: count tasks: %w", err)
	}
	return out, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.queryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// CountPendingApprovals counts the approvals waiting for a decision, on
// every node (for metrics).
func (s *Store) CountPendingApprovals(ctx context.Context) (int, error) {
	var n int
	if err := s.db.queryRow(ctx, "SELECT COUNT(*) FROM approvals WHERE state = ?", string(ApprovalPending)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count pending approvals: %w", err)
	}
	return n, nil
}

// CountStalled counts the running tasks whose newest event is older than
// before: stuck, or doing something very slow without a word (for
// metrics; the chat relay says the same in the task's thread).
func (s *Store) CountStalled(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := s.db.queryRow(ctx, `SELECT COUNT(*) FROM tasks t WHERE t.state = ? AND
		(SELECT e.created_at FROM task_events e WHERE e.task_id = t.id ORDER BY e.seq DESC LIMIT 1) < ?`,
		string(StateRunning), micros(before)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count stalled tasks: %w", err)
	}
	return n, nil
}
