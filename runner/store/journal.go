package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// JournalEntry is one tool call in the write-ahead journal.
type JournalEntry struct {
	TaskID     string
	CallID     string
	Tool       string
	ArgsHash   string
	Args       string
	StartedAt  time.Time
	FinishedAt time.Time // zero while unfinished
	Result     string
	IsError    bool
	// Process describes what the call started, as recorded by
	// JournalProcess (opaque to the store), while the entry is unfinished;
	// "" when nothing was recorded or the call finished.
	Process string
}

// JournalProcess records, for a started call that has not finished, what it
// started (e.g. a process group to kill after a crash), replacing an earlier
// record. It returns an error wrapping ErrNotFound when there is no
// unfinished entry.
//
// The text lives in the entry's result column, which is unused until the
// call finishes and JournalFinish overwrites it: this keeps the schema as it
// is, and a finished call never carries a stale process.
func (s *Store) JournalProcess(ctx context.Context, taskID, callID, process string) error {
	n, err := s.db.exec(ctx, `UPDATE tool_journal SET result = ?
		WHERE task_id = ? AND call_id = ? AND finished_at IS NULL`,
		process, taskID, callID)
	if err != nil {
		return fmt.Errorf("store: journal process %s/%s: %w", taskID, callID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: journal process %s/%s: no unfinished entry: %w", taskID, callID, ErrNotFound)
	}
	return nil
}

// JournalStart records that a tool call is about to run. Call it before the
// tool runs, and run the tool only if it returns nil: after a crash,
// UnfinishedCalls lists exactly the calls that may or may not have had their
// effect. A second start of the same (taskID, callID) returns an error
// wrapping ErrAlreadyStarted and changes nothing.
func (s *Store) JournalStart(ctx context.Context, taskID, callID, tool, argsHash, args string) error {
	if callID == "" || tool == "" {
		return invalid("journal entry needs a call id and a tool")
	}
	n, err := s.db.exec(ctx, `INSERT INTO tool_journal (task_id, call_id, tool, args_hash, args, started_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, call_id) DO NOTHING`,
		taskID, callID, tool, argsHash, args, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: journal start %s/%s: %w", taskID, callID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: journal start %s/%s: %w", taskID, callID, ErrAlreadyStarted)
	}
	return nil
}

// journalFinishSQL finishes an unfinished entry: finished_at, result,
// is_error, task_id, call_id.
const journalFinishSQL = `UPDATE tool_journal SET finished_at = ?, result = ?, is_error = ?
	WHERE task_id = ? AND call_id = ? AND finished_at IS NULL`

// JournalFinish records the outcome of a started call. It returns an error
// wrapping ErrNotFound when there is no unfinished entry for the call (never
// started, or finished already), so an outcome is never overwritten.
func (s *Store) JournalFinish(ctx context.Context, taskID, callID, result string, isError bool) error {
	n, err := s.db.exec(ctx, journalFinishSQL, micros(s.now()), result, boolInt(isError), taskID, callID)
	if err != nil {
		return fmt.Errorf("store: journal finish %s/%s: %w", taskID, callID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: journal finish %s/%s: no unfinished entry: %w", taskID, callID, ErrNotFound)
	}
	return nil
}

// UnfinishedCalls lists the task's calls that started but never finished, in
// start order: after a crash their outcome is unknown and they must not be
// silently re-run.
func (s *Store) UnfinishedCalls(ctx context.Context, taskID string) ([]JournalEntry, error) {
	return s.journal(ctx, taskID, "AND finished_at IS NULL")
}

// Journal lists all of the task's journaled calls in start order.
func (s *Store) Journal(ctx context.Context, taskID string) ([]JournalEntry, error) {
	return s.journal(ctx, taskID, "")
}

func (s *Store) journal(ctx context.Context, taskID, cond string) ([]JournalEntry, error) {
	rs, err := s.db.query(ctx, `SELECT call_id, tool, args_hash, args, started_at, finished_at, result, is_error
		FROM tool_journal WHERE task_id = ? `+cond+` ORDER BY started_at, call_id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("store: read journal: %w", err)
	}
	defer rs.Close()
	var out []JournalEntry
	for rs.Next() {
		e := JournalEntry{TaskID: taskID}
		var started int64
		var finished sql.NullInt64
		var result sql.NullString
		var isErr int
		if err := rs.Scan(&e.CallID, &e.Tool, &e.ArgsHash, &e.Args, &started, &finished, &result, &isErr); err != nil {
			return nil, fmt.Errorf("store: read journal: %w", err)
		}
		e.StartedAt, e.FinishedAt = fromMicros(started), fromNullMicros(finished)
		e.Result, e.IsError = result.String, isErr != 0
		if e.FinishedAt.IsZero() {
			e.Process, e.Result = e.Result, ""
		}
		out = append(out, e)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read journal: %w", err)
	}
	return out, nil
}
