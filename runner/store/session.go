package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

// AppendMessages appends msgs to the task's persisted conversation, in
// order, in one transaction, and returns the sequence number of the last one
// (the conversation's length). Call it as the conversation grows so a
// resumed run can rebuild the session with Messages.
func (s *Store) AppendMessages(ctx context.Context, taskID string, msgs ...agent.Message) (int64, error) {
	seq, _, err := s.AppendMessagesFinishing(ctx, taskID, nil, msgs...)
	return seq, err
}

// CallOutcome is the outcome of a journaled call, as JournalFinish records
// it.
type CallOutcome struct {
	CallID  string
	Result  string
	IsError bool
}

// AppendMessagesFinishing is AppendMessages that also finishes the journal
// entries of done (see JournalFinish), in the same transaction: a step's
// tool message and its call's outcome cost one commit instead of two, and
// each step writes both. It returns the call ids of done that found no
// unfinished entry, which change nothing; the messages are appended
// regardless.
func (s *Store) AppendMessagesFinishing(ctx context.Context, taskID string, done []CallOutcome, msgs ...agent.Message) (int64, []string, error) {
	res, err := s.WriteStep(ctx, taskID, Step{After: -1, Messages: msgs, Finish: done})
	return res.Seq, res.Missed, err
}

// Messages returns the task's persisted conversation in order; nil for a
// task with none.
func (s *Store) Messages(ctx context.Context, taskID string) ([]agent.Message, error) {
	rs, err := s.db.query(ctx, "SELECT body FROM task_messages WHERE task_id = ? ORDER BY seq", taskID)
	if err != nil {
		return nil, fmt.Errorf("store: read messages: %w", err)
	}
	defer rs.Close()
	var out []agent.Message
	for rs.Next() {
		var body string
		if err := rs.Scan(&body); err != nil {
			return nil, fmt.Errorf("store: read messages: %w", err)
		}
		var m agent.Message
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return nil, fmt.Errorf("store: decode message of task %s: %w", taskID, err)
		}
		out = append(out, m)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read messages: %w", err)
	}
	return out, nil
}

// SaveGoalState replaces the task's goal-controller state, an opaque JSON
// document owned by the goals package.
func (s *Store) SaveGoalState(ctx context.Context, taskID string, state json.RawMessage) error {
	if !json.Valid(state) {
		return invalid("goal state is not valid JSON")
	}
	n, err := s.db.exec(ctx, "UPDATE tasks SET goal_state = ?, updated_at = ? WHERE id = ?",
		string(state), micros(s.now()), taskID)
	if err != nil {
		return fmt.Errorf("store: save goal state: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	return nil
}

// GoalState returns the task's goal state, nil if none was saved, or an
// error wrapping ErrNotFound for an unknown task.
func (s *Store) GoalState(ctx context.Context, taskID string) (json.RawMessage, error) {
	var v sql.NullString
	err := s.db.queryRow(ctx, "SELECT goal_state FROM tasks WHERE id = ?", taskID).Scan(&v)
	if isNoRows(err) {
		return nil, fmt.Errorf("store: task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read goal state: %w", err)
	}
	if !v.Valid {
		return nil, nil
	}
	return json.RawMessage(v.String), nil
}
