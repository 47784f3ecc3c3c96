package relay

import (
	"context"
	"time"

	"reasonix/bot"
)

// Several serve nodes on one store each run a relay, and every one of
// them finds the same live tasks; a lease per task in the store makes one
// node the task's relay. The owner renews it; when the owner dies its
// lease runs out and the next scan of another node takes the task over,
// re-rendering from the log (its posts are found by their keys, so
// nothing is posted twice).

// taskLease is the lease of one task's relay, seen by this node.
type taskLease struct {
	st         Store
	task, node string
}

func (l taskLease) Claim(ctx context.Context, ttl time.Duration) (bool, error) {
	return l.st.ClaimChatLease(ctx, l.task, l.node, ttl)
}

func (l taskLease) Release(ctx context.Context) error {
	return l.st.ReleaseChatLease(ctx, l.task, l.node)
}

// leased runs fn while this node holds taskID's lease (bot.ErrLeaseHeld
// when another node does), and gives the lease up after. fn's context
// ends when the relay stops or the lease is lost.
func (r *Relay) leased(taskID string, fn func(context.Context) error) error {
	return bot.Hold(r.ctx, taskLease{st: r.st, task: taskID, node: r.cfg.Node}, r.cfg.LeaseTTL, r.log, "relay of "+taskID, fn)
}

// relayedSomewhere reports whether a watcher — here or on another node —
// relays taskID, and will so edit what its events change.
func (r *Relay) relayedSomewhere(ctx context.Context, taskID string) bool {
	if r.isWatching(taskID) {
		return true
	}
	owner, err := r.st.ChatLeaseHolder(ctx, taskID)
	return err == nil && owner != ""
}
