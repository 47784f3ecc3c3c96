package store

import (
	"context"
	"fmt"
	"strings"
)

// The chat relay's durable memory: which platform deliveries were seen,
// which thread belongs to which task, and which messages were posted for a
// task. Keeping them here rather than in the relay's memory is what lets a
// restarted relay start nothing twice and edit instead of re-posting.

// ChatPost is one message the relay posted for a task under an
// idempotency key ("status", "approval:<id>", "report").
type ChatPost struct {
	TaskID    string
	Key       string
	Transport string
	Channel   string
	MessageID string
}

// ClaimChatEvent records key (e.g. "slack:Ev123") as seen and reports
// whether this call was the first to do so. A redelivery, on any node and
// after any restart, gets false.
func (s *Store) ClaimChatEvent(ctx context.Context, key string) (bool, error) {
	if strings.TrimSpace(key) == "" {
		return false, invalid("chat event key is empty")
	}
	n, err := s.db.exec(ctx, "INSERT INTO chat_events (key, created_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
		key, micros(s.now()))
	if err != nil {
		return false, fmt.Errorf("store: claim chat event: %w", err)
	}
	return n == 1, nil
}

// BindThread makes the thread (transport, channel, thread) the home of
// task taskID. A thread already bound keeps its first task.
func (s *Store) BindThread(ctx context.Context, transport, channel, thread, taskID string) error {
	_, err := s.db.exec(ctx, `INSERT INTO chat_threads (transport, channel, thread, task_id, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (transport, channel, thread) DO NOTHING`,
		transport, channel, thread, taskID, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: bind thread to %s: %w", taskID, err)
	}
	return nil
}

// ThreadTask returns the id of the task living in the thread, or an error
// wrapping ErrNotFound.
func (s *Store) ThreadTask(ctx context.Context, transport, channel, thread string) (string, error) {
	var id string
	err := s.db.queryRow(ctx, "SELECT task_id FROM chat_threads WHERE transport = ? AND channel = ? AND thread = ?",
		transport, channel, thread).Scan(&id)
	if isNoRows(err) {
		return "", fmt.Errorf("store: thread %s/%s: %w", channel, thread, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: thread %s/%s: %w", channel, thread, err)
	}
	return id, nil
}

// SaveChatPost records p. A key recorded already keeps its first message:
// the caller that loses the race edits that one.
func (s *Store) SaveChatPost(ctx context.Context, p ChatPost) error {
	_, err := s.db.exec(ctx, `INSERT INTO chat_posts (task_id, key, transport, channel, message_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, key) DO NOTHING`,
		p.TaskID, p.Key, p.Transport, p.Channel, p.MessageID, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: save chat post %s/%s: %w", p.TaskID, p.Key, err)
	}
	return nil
}

// ChatPost returns what was posted for taskID under key, or an error
// wrapping ErrNotFound.
func (s *Store) ChatPost(ctx context.Context, taskID, key string) (ChatPost, error) {
	p := ChatPost{TaskID: taskID, Key: key}
	err := s.db.queryRow(ctx, "SELECT transport, channel, message_id FROM chat_posts WHERE task_id = ? AND key = ?",
		taskID, key).Scan(&p.Transport, &p.Channel, &p.MessageID)
	if isNoRows(err) {
		return ChatPost{}, fmt.Errorf("store: chat post %s/%s: %w", taskID, key, ErrNotFound)
	}
	if err != nil {
		return ChatPost{}, fmt.Errorf("store: chat post %s/%s: %w", taskID, key, err)
	}
	return p, nil
}

// ChatCursor returns the value stored under key (e.g. a poll offset), 0
// when none is.
func (s *Store) ChatCursor(ctx context.Context, key string) (int64, error) {
	var v int64
	err := s.db.queryRow(ctx, "SELECT value FROM chat_cursors WHERE key = ?", key).Scan(&v)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: chat cursor %s: %w", key, err)
	}
	return v, nil
}

// SetChatCursor stores value under key; it never moves a cursor back.
func (s *Store) SetChatCursor(ctx context.Context, key string, value int64) error {
	_, err := s.db.exec(ctx, `INSERT INTO chat_cursors (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
		WHERE chat_cursors.value < excluded.value`, key, value, micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: set chat cursor %s: %w", key, err)
	}
	return nil
}

// CountChatPosts counts what was posted for taskID under keys starting
// with prefix (the relay's per-task cap survives a restart this way).
func (s *Store) CountChatPosts(ctx context.Context, taskID, prefix string) (int, error) {
	var n int
	// substr rather than LIKE: a prefix holding '_' or '%' means itself.
	err := s.db.queryRow(ctx, "SELECT COUNT(*) FROM chat_posts WHERE task_id = ? AND substr(key, 1, ?) = ?",
		taskID, len(prefix), prefix).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count chat posts of %s: %w", taskID, err)
	}
	return n, nil
}
