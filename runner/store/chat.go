package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
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

// ChatClaim is what ClaimChatEvent found.
type ChatClaim int

const (
	// ChatClaimed: this caller handles the event now and calls
	// FinishChatEvent once it has acted on it.
	ChatClaimed ChatClaim = iota + 1
	// ChatHandled: the event was handled to its end; drop the delivery.
	ChatHandled
	// ChatInFlight: another claim was taken less than the reclaim window
	// ago and is not finished; its handler is presumably still at work.
	// Ask again later: the claim is handed over once it is older than the
	// window, so a handler that died mid-way loses nothing.
	ChatInFlight
)

func (c ChatClaim) String() string {
	switch c {
	case ChatClaimed:
		return "claimed"
	case ChatHandled:
		return "handled"
	case ChatInFlight:
		return "in flight"
	}
	return fmt.Sprintf("ChatClaim(%d)", int(c))
}

// ClaimChatEvent claims the handling of key (e.g. "slack:Ev123") for owner
// (a node name, for the record). The claim is two-phase: it is taken here
// and finished by FinishChatEvent after the action, so a delivery claimed
// by a handler that died before acting is not lost: once the claim is
// older than window, a redelivery, on any node, claims it again (exactly
// one of several racing claimers wins). A finished event is never claimed
// again. Rows from before claims were two-phase count as finished.
func (s *Store) ClaimChatEvent(ctx context.Context, key, owner string, window time.Duration) (ChatClaim, error) {
	if strings.TrimSpace(key) == "" {
		return 0, invalid("chat event key is empty")
	}
	now := s.now()
	// One statement on both dialects: the conflict branch updates only a
	// stale unfinished claim, so the affected row count says who won. On
	// Postgres a racing upsert waits for the row lock and re-checks the
	// WHERE against the claim just taken; SQLite serialises writers.
	n, err := s.db.exec(ctx, `INSERT INTO chat_events (key, created_at, claimed_at, claimed_by) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET claimed_at = excluded.claimed_at, claimed_by = excluded.claimed_by
		WHERE chat_events.done_at IS NULL AND chat_events.claimed_at IS NOT NULL AND chat_events.claimed_at <= ?`,
		key, micros(now), micros(now), owner, micros(now.Add(-window)))
	if err != nil {
		return 0, fmt.Errorf("store: claim chat event %s: %w", key, err)
	}
	if n == 1 {
		return ChatClaimed, nil
	}
	// Lost: finished, or claimed by someone else and still fresh. Reading
	// it after the fact is safe: a finished event stays finished, and
	// "in flight" only makes the caller ask again.
	var claimed, done sql.NullInt64
	err = s.db.queryRow(ctx, "SELECT claimed_at, done_at FROM chat_events WHERE key = ?", key).Scan(&claimed, &done)
	if isNoRows(err) {
		return ChatInFlight, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: claim chat event %s: %w", key, err)
	}
	if done.Valid || !claimed.Valid {
		return ChatHandled, nil
	}
	return ChatInFlight, nil
}

// FinishChatEvent marks key handled: no delivery of it is claimed again.
// Whoever finishes first finishes it (a reclaimed event may be finished
// by its first, slow handler too; either way it was handled).
func (s *Store) FinishChatEvent(ctx context.Context, key string) error {
	_, err := s.db.exec(ctx, "UPDATE chat_events SET done_at = ? WHERE key = ? AND done_at IS NULL AND claimed_at IS NOT NULL",
		micros(s.now()), key)
	if err != nil {
		return fmt.Errorf("store: finish chat event %s: %w", key, err)
	}
	return nil
}

// PruneChatEvents deletes the deliveries whose last mark — finished,
// else claimed, else (a row from before two-phase claims) seen — is older
// than before, and returns how many it deleted. Such a row only matters
// while the platform may still send the delivery again; the runner picks
// before (see the runner's chat event retention).
func (s *Store) PruneChatEvents(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.db.exec(ctx, "DELETE FROM chat_events WHERE COALESCE(done_at, claimed_at, created_at) < ?", micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune chat events: %w", err)
	}
	return n, nil
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
