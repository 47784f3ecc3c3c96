package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FillFinishedForTest writes n finished tasks straight into the tables, in
// one transaction, each with events, messages and journal rows whose
// contents take about perTask bytes, finished at finished: a store as
// months of short tasks leave it, without running them.
func (s *Store) FillFinishedForTest(ctx context.Context, n, perTask int, finished time.Time) error {
	// A short task's shape: 20 events, 6 messages, 4 tool calls (with
	// their result), the events a third of the bytes, the messages a
	// third, the journal a third.
	return s.FillShapedForTest(ctx, n, 20, 6, 4, perTask, finished)
}

// FillShapedForTest is FillFinishedForTest with the task's shape given:
// events, messages and tool calls per task, perTask bytes in all.
func (s *Store) FillShapedForTest(ctx context.Context, n, events, messages, calls, perTask int, finished time.Time) error {
	third := perTask / 3
	ev := `{"text":"` + strings.Repeat("e", max(third/events-12, 1)) + `"}`
	msg := `{"role":"assistant","content":"` + strings.Repeat("m", max(third/messages-34, 1)) + `"}`
	arg := strings.Repeat("a", max(third/calls/2, 1))
	at := micros(finished)
	return s.inTx(ctx, func(tx txn) error {
		for i := range n {
			id := fmt.Sprintf("t_fill%07d", i)
			if _, err := tx.exec(ctx, `INSERT INTO tasks (id, source, requester, prompt, state, result, created_at, updated_at, started_at, finished_at)
				VALUES (?, 'api', 'token:bench', 'fix it', 'succeeded', '{"summary":"done","cost":0.01}', ?, ?, ?, ?)`, id, at, at, at, at); err != nil {
				return err
			}
			for j := range events {
				typ := "message"
				if j%5 == 0 {
					typ = "usage"
				}
				if _, err := tx.exec(ctx, `INSERT INTO task_events (task_id, seq, type, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
					id, j+1, typ, ev, at); err != nil {
					return err
				}
			}
			for j := range messages {
				if _, err := tx.exec(ctx, `INSERT INTO task_messages (task_id, seq, body, created_at) VALUES (?, ?, ?, ?)`, id, j+1, msg, at); err != nil {
					return err
				}
			}
			for j := range calls {
				if _, err := tx.exec(ctx, `INSERT INTO tool_journal (task_id, call_id, tool, args_hash, args, started_at, finished_at, result)
					VALUES (?, ?, 'bash', 'h', ?, ?, ?, ?)`, id, fmt.Sprint("c", j), arg, at, at, arg); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// UsedBytesForTest is how much of the SQLite file holds data: its pages
// less the free ones, times the page size.
func (s *Store) UsedBytesForTest(ctx context.Context) (int64, error) {
	var pages, free, size int64
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := s.db.queryRow(ctx, q).Scan(v); err != nil {
			return 0, err
		}
	}
	return (pages - free) * size, nil
}
