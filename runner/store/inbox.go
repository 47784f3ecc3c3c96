package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"reasonix/internal/ids"
)

// InboxMessage is a message from a person to a task (a chat reply, an API
// message) that the task's run has not taken yet.
type InboxMessage struct {
	ID        string
	TaskID    string
	Requester string
	Text      string
	CreatedAt time.Time
	// TakenAt is when a run took the message; zero while it waits. Only
	// PostMessageOnce fills it in (for a message posted before).
	TakenAt time.Time
}

// PostMessage puts text into task taskID's inbox. The worker running the task,
// on whichever node, takes it between steps (TakeInbox); a task that is not
// running takes it when it runs next.
func (s *Store) PostMessage(ctx context.Context, taskID, requester, text string) (InboxMessage, error) {
	m, _, err := s.postMessage(ctx, taskID, requester, text, "")
	return m, err
}

// PostMessageOnce is PostMessage under an idempotency key (e.g. the chat
// delivery the message came in): the first call posts the message; a
// repeat posts nothing and returns the message posted under key, with
// posted=false and TakenAt set once a run took it.
func (s *Store) PostMessageOnce(ctx context.Context, taskID, requester, text, key string) (m InboxMessage, posted bool, err error) {
	if strings.TrimSpace(key) == "" {
		return InboxMessage{}, false, invalid("message idempotency key is empty")
	}
	return s.postMessage(ctx, taskID, requester, text, key)
}

func (s *Store) postMessage(ctx context.Context, taskID, requester, text, key string) (InboxMessage, bool, error) {
	if strings.TrimSpace(text) == "" {
		return InboxMessage{}, false, invalid("message text is empty")
	}
	now := s.now()
	m := InboxMessage{ID: ids.Sortable("m_", now), TaskID: taskID, Requester: requester, Text: text, CreatedAt: fromMicros(micros(now))}
	var dedupe any // NULL: no key, never a conflict
	if key != "" {
		dedupe = key
	}
	n, err := s.db.exec(ctx, `INSERT INTO task_inbox (id, task_id, requester, body, created_at, dedupe_key) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id, dedupe_key) DO NOTHING`,
		m.ID, taskID, requester, text, micros(now), dedupe)
	if err != nil {
		return InboxMessage{}, false, fmt.Errorf("store: post message to %s: %w", taskID, err)
	}
	if n == 1 {
		return m, true, nil
	}
	old := InboxMessage{TaskID: taskID}
	var at int64
	var taken sql.NullInt64
	err = s.db.queryRow(ctx, "SELECT id, requester, body, created_at, consumed_at FROM task_inbox WHERE task_id = ? AND dedupe_key = ?",
		taskID, key).Scan(&old.ID, &old.Requester, &old.Text, &at, &taken)
	if err != nil {
		return InboxMessage{}, false, fmt.Errorf("store: message %s to %s posted before: %w", key, taskID, err)
	}
	old.CreatedAt = fromMicros(at)
	if taken.Valid {
		old.TakenAt = fromMicros(taken.Int64)
	}
	return old, false, nil
}

// TakeInbox returns the task's untaken messages, oldest first, and marks
// them taken in the same statement, so each is delivered once: the UPDATE
// marks and returns them at once, with no transaction around it (two takes
// at once each return the rows they marked, never the same one).
func (s *Store) TakeInbox(ctx context.Context, taskID string) ([]InboxMessage, error) {
	var out []InboxMessage
	rs, err := s.db.query(ctx, `UPDATE task_inbox SET consumed_at = ? WHERE task_id = ? AND consumed_at IS NULL
		RETURNING id, requester, body, created_at`, micros(s.now()), taskID)
	if err != nil {
		return nil, fmt.Errorf("store: take inbox of %s: %w", taskID, err)
	}
	defer rs.Close()
	for rs.Next() {
		m := InboxMessage{TaskID: taskID}
		var at int64
		if err := rs.Scan(&m.ID, &m.Requester, &m.Text, &at); err != nil {
			return nil, fmt.Errorf("store: take inbox of %s: %w", taskID, err)
		}
		m.CreatedAt = fromMicros(at)
		out = append(out, m)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: take inbox of %s: %w", taskID, err)
	}
	// RETURNING gives no order guarantee.
	slices.SortStableFunc(out, func(a, b InboxMessage) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// HasInbox reports whether the task has untaken messages.
func (s *Store) HasInbox(ctx context.Context, taskID string) (bool, error) {
	var n int
	if err := s.db.queryRow(ctx, "SELECT COUNT(*) FROM task_inbox WHERE task_id = ? AND consumed_at IS NULL", taskID).Scan(&n); err != nil {
		return false, fmt.Errorf("store: read inbox of %s: %w", taskID, err)
	}
	return n > 0, nil
}

// MessageAuthors returns the distinct authors of the task's messages that
// a run has taken, in no particular order: the principals whose words the
// task's conversation holds besides its prompt.
func (s *Store) MessageAuthors(ctx context.Context, taskID string) ([]string, error) {
	rs, err := s.db.query(ctx, "SELECT DISTINCT requester FROM task_inbox WHERE task_id = ? AND consumed_at IS NOT NULL", taskID)
	if err != nil {
		return nil, fmt.Errorf("store: message authors of %s: %w", taskID, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var who string
		if err := rs.Scan(&who); err != nil {
			return nil, fmt.Errorf("store: message authors of %s: %w", taskID, err)
		}
		out = append(out, who)
	}
	return out, rs.Err()
}
