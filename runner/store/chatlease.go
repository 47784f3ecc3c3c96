package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Leases name the serve node doing one piece of chat work while several
// share the store: chat_leases the node relaying a task (keyed by the
// task, and gone with it), chat_poll_leases the node long-polling a chat
// platform (keyed by a name such as "telegram"). Both behave the same.

// leaseTable is one kind of lease: its table and key column.
type leaseTable struct{ table, key string }

var (
	taskLeases = leaseTable{table: "chat_leases", key: "task_id"}
	pollLeases = leaseTable{table: "chat_poll_leases", key: "name"}
)

// claimLease makes owner the holder of key until ttl from now. One statement
// decides, so two nodes racing cannot both win.
func (s *Store) claimLease(ctx context.Context, lt leaseTable, key, owner string, ttl time.Duration) (bool, error) {
	if strings.TrimSpace(owner) == "" || ttl <= 0 {
		return false, invalid("a chat lease needs an owner and a positive ttl")
	}
	now := s.now()
	n, err := s.db.exec(ctx, `INSERT INTO `+lt.table+` (`+lt.key+`, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (`+lt.key+`) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE `+lt.table+`.owner = excluded.owner OR `+lt.table+`.expires_at <= ?`,
		key, owner, micros(now.Add(ttl)), micros(now))
	if err != nil {
		return false, fmt.Errorf("store: claim the chat lease of %s: %w", key, err)
	}
	return n == 1, nil
}

func (s *Store) releaseLease(ctx context.Context, lt leaseTable, key, owner string) error {
	if _, err := s.db.exec(ctx, "DELETE FROM "+lt.table+" WHERE "+lt.key+" = ? AND owner = ?", key, owner); err != nil {
		return fmt.Errorf("store: release the chat lease of %s: %w", key, err)
	}
	return nil
}

func (s *Store) leaseHolder(ctx context.Context, lt leaseTable, key string) (string, error) {
	var owner string
	err := s.db.queryRow(ctx, "SELECT owner FROM "+lt.table+" WHERE "+lt.key+" = ? AND expires_at > ?", key, micros(s.now())).Scan(&owner)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: chat lease of %s: %w", key, err)
	}
	return owner, nil
}

// ClaimChatLease makes owner the node relaying task taskID to chat until
// ttl from now, and reports whether it is: true when the lease was free,
// had run out, or was owner's already (a renewal); false while another
// owner's lease runs. One statement decides, so two nodes racing for a
// task cannot both win.
func (s *Store) ClaimChatLease(ctx context.Context, taskID, owner string, ttl time.Duration) (bool, error) {
	return s.claimLease(ctx, taskLeases, taskID, owner, ttl)
}

// ReleaseChatLease gives up owner's lease on taskID, so another node may
// take the task over at once; another owner's lease is left alone.
func (s *Store) ReleaseChatLease(ctx context.Context, taskID, owner string) error {
	return s.releaseLease(ctx, taskLeases, taskID, owner)
}

// ChatLeaseHolder returns the owner of taskID's lease while it runs, ""
// when nobody holds it.
func (s *Store) ChatLeaseHolder(ctx context.Context, taskID string) (string, error) {
	return s.leaseHolder(ctx, taskLeases, taskID)
}

// ClaimPollLease makes owner the node long-polling the chat platform name
// until ttl from now, as ClaimChatLease does for a task's relay.
func (s *Store) ClaimPollLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	return s.claimLease(ctx, pollLeases, name, owner, ttl)
}

// ReleasePollLease gives up owner's lease on polling name.
func (s *Store) ReleasePollLease(ctx context.Context, name, owner string) error {
	return s.releaseLease(ctx, pollLeases, name, owner)
}

// PollLeaseHolder returns the node polling name while its lease runs, ""
// when none does.
func (s *Store) PollLeaseHolder(ctx context.Context, name string) (string, error) {
	return s.leaseHolder(ctx, pollLeases, name)
}
