package relay

import (
	"context"
	"errors"
	"time"
)

// Several serve nodes on one store each run a relay, and every one of
// them finds the same live tasks; a lease per task in the store makes one
// node the task's relay. The owner renews it; when the owner dies its
// lease runs out and the next scan of another node takes the task over,
// re-rendering from the log (its posts are found by their keys, so
// nothing is posted twice).

// errLeaseHeld: another node relays the task.
var errLeaseHeld = errors.New("relay: another node relays the task")

// leased runs fn while this node holds taskID's lease, and gives the
// lease up after. fn's context ends when the relay stops or the lease is
// lost (this node could not renew it in time, so another may have taken
// over).
func (r *Relay) leased(taskID string, fn func(context.Context) error) error {
	ok, err := r.st.ClaimChatLease(r.ctx, taskID, r.cfg.Node, r.cfg.LeaseTTL)
	if err != nil {
		return err
	}
	if !ok {
		return errLeaseHeld
	}
	ctx, cancel := context.WithCancel(r.ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		r.renew(ctx, cancel, taskID)
	}()
	err = fn(ctx)
	cancel()
	<-renewed
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(r.ctx), 5*time.Second)
	defer rcancel()
	if rerr := r.st.ReleaseChatLease(rctx, taskID, r.cfg.Node); rerr != nil {
		r.log.Warn("relay: releasing a task's lease", "task", taskID, "err", rerr)
	}
	return err
}

// renew renews the lease every third of its ttl and cancels the watcher
// when the lease is lost or could not be renewed for half of it.
func (r *Relay) renew(ctx context.Context, cancel context.CancelFunc, taskID string) {
	t := time.NewTicker(r.cfg.LeaseTTL / 3)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := r.st.ClaimChatLease(ctx, taskID, r.cfg.Node, r.cfg.LeaseTTL)
		switch {
		case err == nil && ok:
			lastOK = time.Now()
			continue
		case err == nil:
			r.log.Warn("relay: another node took over a task's relay", "task", taskID)
		case time.Since(lastOK) < r.cfg.LeaseTTL/2:
			continue // a blip: the lease still runs
		default:
			r.log.Warn("relay: could not renew a task's lease; stopping its relay", "task", taskID, "err", err)
		}
		cancel()
		return
	}
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
