package relay

import (
	"context"
	"time"

	"reasonix/runner"
)

// Store is the relay's durable memory, shared by the serve nodes: which
// platform deliveries were received and handled, which thread belongs to
// which task, which messages were posted for a task, and which node
// relays a task. It is the relay's own: tasks, approvals and roles are
// the service's, read and changed through runner.Service only. The
// service's store (runner/store) implements it; a record that does not
// exist is an error wrapping runner.ErrRecordNotFound.
type Store interface {
	// RecordChatEvent records delivery key with its payload (the inbound
	// message) and claims it for owner, before the platform is
	// acknowledged: ChatClaimed when this caller is to handle it.
	RecordChatEvent(ctx context.Context, key, owner string, payload []byte, window time.Duration) (runner.ChatClaim, error)
	// ClaimChatEvent claims delivery key for owner; a claim older than
	// window and unfinished is handed over.
	ClaimChatEvent(ctx context.Context, key, owner string, window time.Duration) (runner.ChatClaim, error)
	// ReleaseChatEvent gives owner's unfinished claim on key up: the next
	// recovery pass takes it at once.
	ReleaseChatEvent(ctx context.Context, key, owner string) error
	// FinishChatEvent marks delivery key handled: it is never claimed
	// again.
	FinishChatEvent(ctx context.Context, key string) error
	// UnfinishedChatEvents lists up to limit recorded deliveries received
	// after since whose claim is older than window and unfinished.
	UnfinishedChatEvents(ctx context.Context, window time.Duration, since time.Time, limit int) ([]runner.UnfinishedChatEvent, error)

	// BindThread makes thread the home of task taskID; ThreadTask finds
	// the task of a thread.
	BindThread(ctx context.Context, transport, channel, thread, taskID string) error
	ThreadTask(ctx context.Context, transport, channel, thread string) (string, error)

	// SaveChatPost records a message posted for a task under its key;
	// ChatPost finds it; CountChatPosts counts a task's posts whose key
	// has prefix.
	SaveChatPost(ctx context.Context, p runner.ChatPost) error
	ChatPost(ctx context.Context, taskID, key string) (runner.ChatPost, error)
	CountChatPosts(ctx context.Context, taskID, prefix string) (int, error)

	// ClaimChatLease takes (or renews) for owner the lease on relaying
	// task taskID; ReleaseChatLease gives it up; ChatLeaseHolder names the
	// node holding it ("" for none).
	ClaimChatLease(ctx context.Context, taskID, owner string, ttl time.Duration) (bool, error)
	ReleaseChatLease(ctx context.Context, taskID, owner string) error
	ChatLeaseHolder(ctx context.Context, taskID string) (string, error)
}
