package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event is one entry of a task's append-only log. Seq starts at 1 and grows
// by one per task with no gaps, so a reader resumes with Events(afterSeq).
type Event struct {
	TaskID  string
	Seq     int64
	Type    string
	Payload json.RawMessage
	Time    time.Time
}

// AppendEvent appends an event of type typ to task taskID's log and returns
// it with its sequence number. payload must be valid JSON; nil stores "{}".
// Concurrent appenders to the same task are serialized by the task's counter
// row, so sequence numbers never collide or skip.
func (s *Store) AppendEvent(ctx context.Context, taskID, typ string, payload json.RawMessage) (Event, error) {
	if typ == "" {
		return Event{}, invalid("event type is empty")
	}
	if payload == nil {
		payload = json.RawMessage("{}")
	}
	if !json.Valid(payload) {
		return Event{}, invalid("event payload is not valid JSON")
	}
	now := s.now()
	ev := Event{TaskID: taskID, Type: typ, Payload: payload, Time: fromMicros(micros(now))}
	if s.dialect == dialectPostgres {
		seq, err := s.appendCounted(ctx, "event_seq",
			"INSERT INTO task_events (task_id, seq, type, payload, created_at) SELECT ?, n, ?, ?, ? FROM c RETURNING seq",
			taskID, taskID, typ, string(payload), micros(now))
		if err != nil {
			return Event{}, fmt.Errorf("store: append event: %w", err)
		}
		ev.Seq = seq
		return ev, nil
	}
	err := s.inTx(ctx, func(tx txn) error {
		seq, err := bumpCounter(ctx, tx, taskID, "event_seq", 1)
		if err != nil {
			return err
		}
		ev.Seq = seq
		if _, err := tx.exec(ctx, "INSERT INTO task_events (task_id, seq, type, payload, created_at) VALUES (?, ?, ?, ?, ?)",
			taskID, seq, typ, string(payload), micros(now)); err != nil {
			return fmt.Errorf("store: append event: %w", err)
		}
		return nil
	})
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

// appendCounted bumps the task's counter column col by one and inserts a
// row numbered by it in one statement (Postgres): the UPDATE in a CTE
// named c yields the new value as n, which insert (an INSERT ... SELECT
// ... FROM c RETURNING seq) uses. One statement is one round trip and an
// implicit transaction, where BEGIN, UPDATE, INSERT and COMMIT were four;
// events and messages are written several times per step. The row lock
// the UPDATE takes orders concurrent appenders as before. args are
// insert's; the task id is prepended for the UPDATE. An unknown task is
// ErrNotFound.
func (s *Store) appendCounted(ctx context.Context, col, insert, taskID string, args ...any) (int64, error) {
	var seq int64
	err := s.db.queryRow(ctx, "WITH c AS (UPDATE tasks SET "+col+" = "+col+" + 1 WHERE id = ? RETURNING "+col+" AS n) "+insert,
		append([]any{taskID}, args...)...).Scan(&seq)
	if isNoRows(err) {
		return 0, fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	return seq, err
}

// bumpCounter adds n to one of the task's counter columns and returns the new
// value. The UPDATE takes the task row's write lock (Postgres) or the
// database write lock (SQLite) until the transaction ends, which is what
// serializes concurrent appenders.
func bumpCounter(ctx context.Context, tx txn, taskID, col string, n int64) (int64, error) {
	var v int64
	err := tx.queryRow(ctx, "UPDATE tasks SET "+col+" = "+col+" + ? WHERE id = ? RETURNING "+col, n, taskID).Scan(&v)
	if isNoRows(err) {
		return 0, fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: bump %s: %w", col, err)
	}
	return v, nil
}

// Events returns up to limit events of task taskID with Seq > afterSeq, in
// order. limit <= 0 means 1000. An unknown task has no events.
func (s *Store) Events(ctx context.Context, taskID string, afterSeq int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 1000
	}
	rs, err := s.db.query(ctx, `SELECT seq, type, payload, created_at FROM task_events
		WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`, taskID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read events: %w", err)
	}
	defer rs.Close()
	var out []Event
	for rs.Next() {
		ev := Event{TaskID: taskID}
		var payload string
		var at int64
		if err := rs.Scan(&ev.Seq, &ev.Type, &payload, &at); err != nil {
			return nil, fmt.Errorf("store: read events: %w", err)
		}
		ev.Payload, ev.Time = json.RawMessage(payload), fromMicros(at)
		out = append(out, ev)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read events: %w", err)
	}
	return out, nil
}
