package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// What retention ([runner] retain) prunes of a finished task, and what it
// keeps. A task's row (its summary, result and cost), its approvals and
// their audit, its grants, its thread binding and its publish record stay:
// they are what the task was and who allowed what. So do the few events
// the service reads back after the end: the state changes (the task's
// durations), the usage records (its spend, which a continuation adds
// to) and the final report. What goes is what grew with every step and
// only a run or a replay reads: the other events, the conversation, the
// tool journal, the steering inbox, the idempotency keys of its chat
// posts and a scratch archive in transit.
var prunedTables = []struct {
	table string
	bytes string // the expression summed for the size estimate; "" counts rows only
	where string // more of the rows' condition; "" all of the task's
}{
	{"task_events", "LENGTH(payload)", "type NOT IN ('task_state', 'usage', 'final_report')"},
	{"task_messages", "LENGTH(body)", ""},
	{"tool_journal", "LENGTH(args) + COALESCE(LENGTH(result), 0)", ""},
	{"task_inbox", "LENGTH(body)", ""},
	{"chat_posts", "", ""},
	{"task_scratch", "LENGTH(archive)", ""},
	{"scratch_requests", "", ""},
}

// terminalList is the terminal states as an SQL list of literals; they
// are constants, so nothing of a caller's reaches the text.
func terminalList() string {
	var b strings.Builder
	for _, st := range states {
		if st.Terminal() {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString("'" + string(st) + "'")
		}
	}
	return b.String()
}

// PrunableTask is a finished task whose per-step history retention may
// prune, with what that history holds.
type PrunableTask struct {
	ID         string
	State      State
	FinishedAt time.Time
	Events     int64 // rows of task_events
	Messages   int64 // rows of task_messages
	Journal    int64 // rows of tool_journal
	Other      int64 // rows of the inbox, chat post keys and scratch hand-over
	// Bytes is about what the rows' contents take (text lengths, which
	// count characters on Postgres), not the database's pages.
	Bytes int64
}

// Rows is how many rows pruning t deletes.
func (t PrunableTask) Rows() int64 { return t.Events + t.Messages + t.Journal + t.Other }

// PrunableTasks returns up to limit tasks in a terminal state that finished
// before before and whose history was not pruned since, oldest first, after
// the task after (nil: from the start; pass the last one returned to page
// on). A task continued after it was pruned finishes again later and is
// listed again. limit ≤ 0 means 100.
func (s *Store) PrunableTasks(ctx context.Context, before time.Time, after *PrunableTask, limit int) ([]PrunableTask, error) {
	if limit <= 0 {
		limit = 100
	}
	var cols strings.Builder
	for _, p := range prunedTables {
		cond := "x.task_id = t.id"
		if p.where != "" {
			cond += " AND " + p.where
		}
		fmt.Fprintf(&cols, ", (SELECT COUNT(*) FROM %s x WHERE %s)", p.table, cond)
		if p.bytes != "" {
			fmt.Fprintf(&cols, ", (SELECT COALESCE(SUM(%s), 0) FROM %s x WHERE %s)", p.bytes, p.table, cond)
		}
	}
	q := `SELECT t.id, t.state, t.finished_at` + cols.String() + ` FROM tasks t
		WHERE t.finished_at < ? AND t.state IN (` + terminalList() + `)
			AND (t.pruned_at IS NULL OR t.pruned_at <= t.finished_at)`
	args := []any{micros(before)}
	if after != nil {
		q += ` AND (t.finished_at > ? OR (t.finished_at = ? AND t.id > ?))`
		fa := micros(after.FinishedAt)
		args = append(args, fa, fa, after.ID)
	}
	q += ` ORDER BY t.finished_at, t.id LIMIT ?`
	args = append(args, limit)
	rs, err := s.db.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: prunable tasks: %w", err)
	}
	defer rs.Close()
	var out []PrunableTask
	for rs.Next() {
		var (
			t        PrunableTask
			state    string
			finished int64
			counts   = make([]int64, len(prunedTables))
			sizes    = make([]int64, len(prunedTables))
		)
		dest := []any{&t.ID, &state, &finished}
		for i, p := range prunedTables {
			dest = append(dest, &counts[i])
			if p.bytes != "" {
				dest = append(dest, &sizes[i])
			}
		}
		if err := rs.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: prunable tasks: %w", err)
		}
		t.State, t.FinishedAt = State(state), fromMicros(finished)
		t.Events, t.Messages, t.Journal = counts[0], counts[1], counts[2]
		for i := range prunedTables {
			if i > 2 {
				t.Other += counts[i]
			}
			t.Bytes += sizes[i]
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: prunable tasks: %w", err)
	}
	return out, nil
}

// PruneTasks deletes the per-step history of those of ids that are still
// in a terminal state and finished before before, and marks them pruned,
// in one transaction; a task continued meanwhile is left alone. It
// returns the ids it pruned and how many rows it deleted.
func (s *Store) PruneTasks(ctx context.Context, ids []string, before time.Time) (pruned []string, rows int64, err error) {
	if len(ids) == 0 {
		return nil, 0, nil
	}
	err = s.inTx(ctx, func(tx txn) error {
		pruned, rows = nil, 0
		marks := `UPDATE tasks SET pruned_at = ? WHERE id IN (` + placeholders(len(ids)) + `)
			AND state IN (` + terminalList() + `) AND finished_at < ? RETURNING id`
		args := append(append([]any{micros(s.now())}, idArgs(ids)...), micros(before))
		rs, err := tx.query(ctx, marks, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var id string
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return err
			}
			pruned = append(pruned, id)
		}
		err = rs.Err()
		rs.Close()
		if err != nil || len(pruned) == 0 {
			return err
		}
		in := placeholders(len(pruned))
		for _, p := range prunedTables {
			q := `DELETE FROM ` + p.table + ` WHERE task_id IN (` + in + `)`
			if p.where != "" {
				q += ` AND ` + p.where
			}
			n, err := tx.exec(ctx, q, idArgs(pruned)...)
			if err != nil {
				return fmt.Errorf("%s: %w", p.table, err)
			}
			rows += n
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: prune tasks: %w", err)
	}
	return pruned, rows, nil
}

// GCTask is what workspace garbage collection needs to know of a task
// whose directory or branch a node still holds.
type GCTask struct {
	ID         string
	State      State
	FinishedAt time.Time // zero while the task never finished
	// Published is the commit of the task's branch the publish outbox
	// pushed to a forge (its record pushed or done); "" when none was.
	Published string
}

// GCTasks returns what GC needs of each of ids that exists, by id.
func (s *Store) GCTasks(ctx context.Context, ids []string) (map[string]GCTask, error) {
	out := make(map[string]GCTask, len(ids))
	const chunk = 500
	for len(ids) > 0 {
		n := min(len(ids), chunk)
		part := ids[:n]
		ids = ids[n:]
		rs, err := s.db.query(ctx, `SELECT t.id, t.state, t.finished_at, p.commit_sha, p.state
			FROM tasks t LEFT JOIN publishes p ON p.task_id = t.id
			WHERE t.id IN (`+placeholders(len(part))+`)`, idArgs(part)...)
		if err != nil {
			return nil, fmt.Errorf("store: gc tasks: %w", err)
		}
		for rs.Next() {
			var (
				t                GCTask
				state            string
				finished         *int64
				commit, pubState *string
			)
			if err := rs.Scan(&t.ID, &state, &finished, &commit, &pubState); err != nil {
				rs.Close()
				return nil, fmt.Errorf("store: gc tasks: %w", err)
			}
			t.State = State(state)
			if finished != nil {
				t.FinishedAt = fromMicros(*finished)
			}
			if commit != nil && pubState != nil && (PublishState(*pubState) == PublishPushed || PublishState(*pubState) == PublishDone) {
				t.Published = *commit
			}
			out[t.ID] = t
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("store: gc tasks: %w", err)
		}
	}
	return out, nil
}

// placeholders is n "?" separated by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func idArgs(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
