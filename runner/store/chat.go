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
	return s.claimChatEvent(ctx, key, owner, nil, window)
}

// claimChatEvent is ClaimChatEvent, recording payload (a string, or nil
// for none) with the claim.
func (s *Store) claimChatEvent(ctx context.Context, key, owner string, payload any, window time.Duration) (ChatClaim, error) {
	if strings.TrimSpace(key) == "" {
		return 0, invalid("chat event key is empty")
	}
	now := s.now()
	// One statement on both dialects: the conflict branch updates only a
	// stale unfinished claim, so the affected row count says who won. On
	// Postgres a racing upsert waits for the row lock and re-checks the
	// WHERE against the claim just taken; SQLite serialises writers. A
	// stored payload is kept (COALESCE), never replaced.
	n, err := s.db.exec(ctx, `INSERT INTO chat_events (key, created_at, claimed_at, claimed_by, payload) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET claimed_at = excluded.claimed_at, claimed_by = excluded.claimed_by,
			payload = COALESCE(chat_events.payload, excluded.payload)
		WHERE chat_events.done_at IS NULL AND chat_events.claimed_at IS NOT NULL AND chat_events.claimed_at <= ?`,
		key, micros(now), micros(now), owner, payload, micros(now.Add(-window)))
	if err != nil {
		return 0, fmt.Errorf("store: claim chat event %s: %w", key, err)
	}
	if n == 1 {
		return ChatClaimed, nil
	}
	if payload != nil {
		// In flight under a claim taken without a payload: record this
		// one, so the delivery is not lost should that claimer die (its
		// claim is left as it is).
		if _, err := s.db.exec(ctx, `UPDATE chat_events SET payload = ?
			WHERE key = ? AND payload IS NULL AND done_at IS NULL AND claimed_at IS NOT NULL`, payload, key); err != nil {
			return 0, fmt.Errorf("store: claim chat event %s: %w", key, err)
		}
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

// RecordChatEvent records a delivery of key just received, with its
// payload (what the receiver needs to handle it, e.g. the inbound message
// as JSON), as claimed by owner: a durable receipt taken before the
// delivery is acknowledged to the platform, so that once acknowledged it
// is handled even if owner dies (see UnfinishedChatEvents). A new
// delivery costs one INSERT and is ChatClaimed. A redelivery keeps the
// two-phase claim's rules (see ClaimChatEvent): a finished one is
// ChatHandled, one whose claim is stale is claimed again by owner, one
// claimed less than window ago is ChatInFlight. A stored payload is never
// overwritten; one claimed without a payload (by ClaimChatEvent) gets
// this one, so the recovery pass can handle it should its claimer die.
func (s *Store) RecordChatEvent(ctx context.Context, key, owner string, payload []byte, window time.Duration) (ChatClaim, error) {
	if len(payload) == 0 {
		return 0, invalid("chat event payload is empty")
	}
	return s.claimChatEvent(ctx, key, owner, string(payload), window)
}

// UnfinishedChatEvent is a recorded delivery whose claim went stale
// before it was finished.
type UnfinishedChatEvent struct {
	Key       string
	Payload   []byte
	ClaimedBy string
	ClaimedAt time.Time
	CreatedAt time.Time
}

// UnfinishedChatEvents lists up to limit recorded deliveries (with a
// payload) that are not finished and whose claim is older than window,
// received after since, oldest claim first: the deliveries whose handler
// died. Listing does not claim them; ClaimChatEvent does, exactly one
// racing caller winning each.
func (s *Store) UnfinishedChatEvents(ctx context.Context, window time.Duration, since time.Time, limit int) ([]UnfinishedChatEvent, error) {
	rs, err := s.db.query(ctx, `SELECT key, payload, claimed_by, claimed_at, created_at FROM chat_events
		WHERE done_at IS NULL AND payload IS NOT NULL AND claimed_at <= ? AND created_at > ?
		ORDER BY claimed_at LIMIT ?`, micros(s.now().Add(-window)), micros(since), limit)
	if err != nil {
		return nil, fmt.Errorf("store: unfinished chat events: %w", err)
	}
	defer rs.Close()
	var out []UnfinishedChatEvent
	for rs.Next() {
		var (
			e                  UnfinishedChatEvent
			payload            string
			claimed, createdAt int64
		)
		if err := rs.Scan(&e.Key, &payload, &e.ClaimedBy, &claimed, &createdAt); err != nil {
			return nil, fmt.Errorf("store: unfinished chat events: %w", err)
		}
		e.Payload, e.ClaimedAt, e.CreatedAt = []byte(payload), fromMicros(claimed), fromMicros(createdAt)
		out = append(out, e)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: unfinished chat events: %w", err)
	}
	return out, nil
}

// ReleaseChatEvent gives up owner's unfinished claim of key, so that the
// next delivery of it is claimed at once instead of once the claim is
// older than the claim window: for a handling that failed where a
// redelivery may get past. A finished delivery, or one another owner
// claimed since, is left as it is.
func (s *Store) ReleaseChatEvent(ctx context.Context, key, owner string) error {
	// Claimed at the epoch: stale for any window, and still unfinished.
	_, err := s.db.exec(ctx, `UPDATE chat_events SET claimed_at = 0
		WHERE key = ? AND claimed_by = ? AND done_at IS NULL AND claimed_at IS NOT NULL`, key, owner)
	if err != nil {
		return fmt.Errorf("store: release chat event %s: %w", key, err)
	}
	return nil
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
