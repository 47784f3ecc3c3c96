package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ClaimChatLease makes owner the node relaying task taskID to chat until
// ttl from now, and reports whether it is: true when the lease was free,
// had run out, or was owner's already (a renewal); false while another
// owner's lease runs. One statement decides, so two nodes racing for a
// task cannot both win.
func (s *Store) ClaimChatLease(ctx context.Context, taskID, owner string, ttl time.Duration) (bool, error) {
	if strings.TrimSpace(owner) == "" || ttl <= 0 {
		return false, invalid("a chat lease needs an owner and a positive ttl")
	}
	now := s.now()
	n, err := s.db.exec(ctx, `INSERT INTO chat_leases (task_id, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE chat_leases.owner = excluded.owner OR chat_leases.expires_at <= ?`,
		taskID, owner, micros(now.Add(ttl)), micros(now))
	if err != nil {
		return false, fmt.Errorf("store: claim the chat lease of %s: %w", taskID, err)
	}
	return n == 1, nil
}

// ReleaseChatLease gives up owner's lease on taskID, so another node may
// take the task over at once; another owner's lease is left alone.
func (s *Store) ReleaseChatLease(ctx context.Context, taskID, owner string) error {
	if _, err := s.db.exec(ctx, "DELETE FROM chat_leases WHERE task_id = ? AND owner = ?", taskID, owner); err != nil {
		return fmt.Errorf("store: release the chat lease of %s: %w", taskID, err)
	}
	return nil
}

// ChatLeaseHolder returns the owner of taskID's lease while it runs, ""
// when nobody holds it.
func (s *Store) ChatLeaseHolder(ctx context.Context, taskID string) (string, error) {
	var owner string
	err := s.db.queryRow(ctx, "SELECT owner FROM chat_leases WHERE task_id = ? AND expires_at > ?", taskID, micros(s.now())).Scan(&owner)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: chat lease of %s: %w", taskID, err)
	}
	return owner, nil
}
