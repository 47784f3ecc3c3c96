package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
// row (task_counters), so sequence numbers never collide or skip.
func (s *Store) AppendEvent(ctx context.Context, taskID, typ string, payload json.RawMessage) (Event, error) {
	evs, err := s.AppendEvents(ctx, taskID, EventInput{Type: typ, Payload: payload})
	if err != nil {
		return Event{}, err
	}
	return evs[0], nil
}

// EventInput is an event to append: its type, JSON payload (nil stores
// "{}") and when it happened (zero: now).
type EventInput struct {
	Type    string
	Payload json.RawMessage
	Time    time.Time
}

// AppendEvents appends events to task taskID's log in order, all or none,
// and returns them with their sequence numbers. On Postgres they take one
// statement whatever their number, which is what lets a run write the
// events of a busy moment together instead of one round trip each.
func (s *Store) AppendEvents(ctx context.Context, taskID string, in ...EventInput) ([]Event, error) {
	if len(in) == 0 {
		return nil, nil
	}
	evs, err := s.newEvents(taskID, in)
	if err != nil {
		return nil, err
	}
	if s.dialect == dialectPostgres {
		if err := appendEventsStatement(ctx, s.db, evs); err != nil {
			return nil, err
		}
		return evs, nil
	}
	err = s.inTx(ctx, func(tx txn) error { return appendEventsTx(ctx, tx, evs) })
	if err != nil {
		return nil, err
	}
	return evs, nil
}

// newEvents checks in and stamps it for taskID's log, unnumbered.
func (s *Store) newEvents(taskID string, in []EventInput) ([]Event, error) {
	now := micros(s.now())
	evs := make([]Event, len(in))
	for i, e := range in {
		if e.Type == "" {
			return nil, invalid("event type is empty")
		}
		if e.Payload == nil {
			e.Payload = json.RawMessage("{}")
		}
		if !json.Valid(e.Payload) {
			return nil, invalid("event payload is not valid JSON")
		}
		at := now
		if !e.Time.IsZero() {
			at = micros(e.Time)
		}
		evs[i] = Event{TaskID: taskID, Type: e.Type, Payload: e.Payload, Time: fromMicros(at)}
	}
	return evs, nil
}

// eventValues is evs as a VALUES list named v (i, t, p, at) for an INSERT
// ... SELECT that numbers row i from a counter's new value, and its args.
func eventValues(evs []Event) (string, []any) {
	rows := make([]string, len(evs))
	args := make([]any, 0, 3*len(evs))
	for i, e := range evs {
		rows[i] = fmt.Sprintf("(%d, ?::text, ?::text, ?::bigint)", i+1)
		args = append(args, e.Type, string(e.Payload), micros(e.Time))
	}
	return "(VALUES " + strings.Join(rows, ", ") + ") AS v (i, t, p, at)", args
}

// appendEventsStatement appends evs (of one task) to its log in one
// Postgres statement, numbering them: the counter moves (counterSQL) and
// the events are inserted from its new value.
func appendEventsStatement(ctx context.Context, q querier, evs []Event) error {
	taskID := evs[0].TaskID
	values, vargs := eventValues(evs)
	n := int64(len(evs))
	args := append(append(counterArgs(taskID, n), taskID, n), vargs...)
	rs, err := q.query(ctx, `WITH c AS (`+counterSQL+`)
		INSERT INTO task_events (task_id, seq, type, payload, created_at)
		SELECT ?, c.n - ? + v.i, v.t, v.p, v.at FROM c, `+values+`
		RETURNING seq`, args...)
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	defer rs.Close()
	var seqs []int64
	for rs.Next() {
		var seq int64
		if err := rs.Scan(&seq); err != nil {
			return fmt.Errorf("store: append events: %w", err)
		}
		seqs = append(seqs, seq)
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	if len(seqs) == 0 {
		return fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	// RETURNING does not promise the VALUES order; the numbers are
	// consecutive, so the smallest is the first event's.
	first := slices.Min(seqs)
	for i := range evs {
		evs[i].Seq = first + int64(i)
	}
	return nil
}

// appendEventsTx appends evs (of one task) to its log inside tx, numbering
// them: one statement on Postgres (appendEventsStatement), the counter and
// a row per event on SQLite, where statements cost no round trip.
func appendEventsTx(ctx context.Context, tx txn, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	if _, pg := tx.(*postgresTx); pg {
		return appendEventsStatement(ctx, tx, evs)
	}
	end, err := bumpEvents(ctx, tx, evs[0].TaskID, int64(len(evs)))
	if err != nil {
		return err
	}
	return insertEvents(ctx, tx, evs, end)
}

// insertEvents writes evs numbered up to end, the task's event counter
// already moved past them in the same transaction.
// They take one statement per 100 (a row each would be a round trip each
// on Postgres).
func insertEvents(ctx context.Context, q querier, evs []Event, end int64) error {
	for i := range evs {
		evs[i].Seq = end - int64(len(evs)) + int64(i) + 1
	}
	for rest := evs; len(rest) > 0; {
		batch := rest[:min(len(rest), 100)]
		rest = rest[len(batch):]
		args := make([]any, 0, 5*len(batch))
		for _, e := range batch {
			args = append(args, e.TaskID, e.Seq, e.Type, string(e.Payload), micros(e.Time))
		}
		if _, err := q.exec(ctx, "INSERT INTO task_events (task_id, seq, type, payload, created_at) VALUES (?, ?, ?, ?, ?)"+
			strings.Repeat(", (?, ?, ?, ?, ?)", len(batch)-1), args...); err != nil {
			return fmt.Errorf("store: append event: %w", err)
		}
	}
	return nil
}

// counterSQL moves a task's event counter by n and returns its new value
// as n: an upsert into task_counters whose first row for the task starts
// from the counter the tasks row kept (set when the task was created, or
// before migration 18). The counter row's lock orders concurrent
// appenders, as the tasks row's did, without rewriting that wide row.
// Its args are counterArgs'; a task that does not exist moves nothing
// and returns no row.
const counterSQL = `INSERT INTO task_counters (task_id, event_seq)
	SELECT id, event_seq + ? FROM tasks WHERE id = ?
	ON CONFLICT (task_id) DO UPDATE SET event_seq = task_counters.event_seq + ?
	RETURNING event_seq AS n`

func counterArgs(taskID string, n int64) []any { return []any{n, taskID, n} }

// bumpEvents adds n to the task's event counter (counterSQL) and returns
// the new value.
func bumpEvents(ctx context.Context, q querier, taskID string, n int64) (int64, error) {
	var v int64
	err := q.queryRow(ctx, counterSQL, counterArgs(taskID, n)...).Scan(&v)
	if isNoRows(err) {
		return 0, fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: bump the event counter: %w", err)
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
