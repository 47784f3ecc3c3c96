package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// EventsOfType returns every event of type typ in task taskID's log, in
// order. It is for folding one kind of record over a task's whole life
// (the runner sums its "usage" events into the task's spend); an unknown
// task has none.
func (s *Store) EventsOfType(ctx context.Context, taskID, typ string) ([]Event, error) {
	rs, err := s.db.query(ctx, `SELECT seq, payload, created_at FROM task_events
		WHERE task_id = ? AND type = ? ORDER BY seq`, taskID, typ)
	if err != nil {
		return nil, fmt.Errorf("store: read %s events: %w", typ, err)
	}
	defer rs.Close()
	var out []Event
	for rs.Next() {
		ev := Event{TaskID: taskID, Type: typ}
		var payload string
		var at int64
		if err := rs.Scan(&ev.Seq, &payload, &at); err != nil {
			return nil, fmt.Errorf("store: read %s events: %w", typ, err)
		}
		ev.Payload, ev.Time = json.RawMessage(payload), fromMicros(at)
		out = append(out, ev)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read %s events: %w", typ, err)
	}
	return out, nil
}
