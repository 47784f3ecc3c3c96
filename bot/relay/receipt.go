package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// Durable receipt (the bot.Receiver contract): every transport has the
// relay record a delivery before it acknowledges it to its platform
// (Slack must be answered within seconds, whatever the relay's workers
// are doing; Telegram's offset moves past it) — claimed by this node, the
// inbound message stored with the claim — and acknowledges it once that
// is stored. A platform never sends an acknowledged delivery again, so
// from then on the store is what makes it handled: the receiving node
// handles it and finishes the claim, and if that node dies first, or
// could not queue it, or its handling failed, the recovery pass of any
// node running the relay takes the stale claim over and handles it from
// the stored message.

// recoverFor is how long after its receipt a delivery is still recovered:
// one whose handling keeps failing is given up after it (the retention
// sweep deletes the row later), rather than retried every pass forever.
const recoverFor = time.Hour

// recoverBatch bounds the deliveries one recovery pass takes on.
const recoverBatch = 16

// Receive records in, received just now, before the transport
// acknowledges it, and returns its handling, for the transport to run once
// it has acknowledged it: nil when there is nothing to do (not for the
// bot, handled already, or being handled by the node that recorded it).
// The handling does not claim the delivery again: this call claimed it.
// An error means nothing was recorded: the transport must not acknowledge
// the delivery, so the platform sends it again.
func (r *Relay) Receive(ctx context.Context, in bot.Inbound) (func(context.Context), error) {
	t, ok := r.transports[in.Transport]
	if !ok || !r.access[in.Transport].channelAllowed(in) {
		if in.Addressed { // chatter in other channels is no one's loss
			r.dropped(in, "the channel is not in the allow list")
		}
		return nil, nil
	}
	if in.EventID == "" {
		// Nothing to key a receipt on: handled once, as it comes.
		return func(ctx context.Context) { r.handle(ctx, t, in) }, nil
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("relay: encoding a delivery: %w", err)
	}
	key := in.Transport + ":" + in.EventID
	c, err := r.st.RecordChatEvent(ctx, key, r.cfg.Node, payload, r.cfg.ClaimWindow)
	if err != nil {
		return nil, fmt.Errorf("relay: recording a delivery: %w", err)
	}
	if c != runner.ChatClaimed {
		// Handled, or recorded by a live receiver (a retry of a delivery
		// under way): that receiver or the recovery pass handles it.
		return nil, nil
	}
	return func(ctx context.Context) { r.run(ctx, t, in, key) }, nil
}

// run handles in, whose delivery key this node has claimed, and finishes
// the claim. One whose handling failed is left unfinished, its claim given
// up, so the next recovery pass tries it again rather than one after the
// claim window: the store or the service that failed may be back by then.
func (r *Relay) run(ctx context.Context, t bot.Transport, in bot.Inbound, key string) bool {
	if !r.handle(ctx, t, in) {
		r.log.Warn("relay: handling a delivery failed; it is tried again", "transport", in.Transport, "event", in.EventID)
		if err := r.st.ReleaseChatEvent(context.WithoutCancel(ctx), key, r.cfg.Node); err != nil {
			r.log.Warn("relay: releasing a delivery", "transport", in.Transport, "event", in.EventID, "err", err)
		}
		return false
	}
	if err := r.st.FinishChatEvent(context.WithoutCancel(ctx), key); err != nil {
		// Handled all the same; handling it again is harmless.
		r.log.Warn("relay: marking a delivery handled", "transport", in.Transport, "event", in.EventID, "err", err)
	}
	return true
}

// recoverLoop runs the recovery pass every RecoverInterval until Stop.
func (r *Relay) recoverLoop() {
	tick := time.NewTicker(r.cfg.RecoverInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		r.recoverOnce(r.ctx)
		r.recoveries.Add(1)
	}
}

// recoverOnce handles the deliveries recorded on receipt whose claim went
// stale unfinished: their receiver died, or its handling failed. Each is
// claimed again first, so of the nodes passing at once exactly one
// handles it, through the same path as a live delivery.
func (r *Relay) recoverOnce(ctx context.Context) {
	list, err := r.st.UnfinishedChatEvents(ctx, r.cfg.ClaimWindow, r.now().Add(-recoverFor), recoverBatch)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("relay: listing unfinished deliveries", "err", err)
		}
		return
	}
	for _, e := range list {
		if ctx.Err() != nil {
			return
		}
		var in bot.Inbound
		if err := json.Unmarshal(e.Payload, &in); err != nil || in.Transport+":"+in.EventID != e.Key {
			r.log.Error("relay: an unreadable recorded delivery; dropping it", "event", e.Key, "err", err)
			if c, err := r.st.ClaimChatEvent(ctx, e.Key, r.cfg.Node, r.cfg.ClaimWindow); err == nil && c == runner.ChatClaimed {
				if err := r.st.FinishChatEvent(ctx, e.Key); err != nil {
					r.log.Warn("relay: dropping an unreadable delivery", "event", e.Key, "err", err) // it ages out of recovery anyway
				}
			}
			continue
		}
		t, ok := r.transports[in.Transport]
		if !ok {
			continue // a node running that transport recovers it
		}
		c, err := r.st.ClaimChatEvent(ctx, e.Key, r.cfg.Node, r.cfg.ClaimWindow)
		if err != nil {
			r.log.Warn("relay: claiming an unfinished delivery", "event", e.Key, "err", err)
			continue
		}
		if c != runner.ChatClaimed {
			continue // another node took it first
		}
		r.log.Info("relay: handling a delivery its receiver did not finish", "event", e.Key, "received_by", e.ClaimedBy, "received_at", e.CreatedAt)
		r.run(ctx, t, in, e.Key)
	}
}
