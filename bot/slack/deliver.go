package slack

import (
	"context"
	"time"

	"reasonix/bot"
)

// An event (a message or a mention) is acknowledged to Slack as soon as
// it is recorded durably, before it is handled: Slack wants an answer
// within 3 s whatever the relay's workers are doing, and never sends an
// acknowledged event again, so what makes an acknowledged event handled
// is the record, not this process. The relay is the bot.Receiver: it records
// the delivery in the store (one INSERT, claimed by this node, the
// inbound message stored with the claim) in the receive path, and hands
// back the handling, which a worker runs afterwards. Should this node die
// or its queue be full, the relay's recovery pass on any node handles the
// recorded delivery once its claim is stale. A delivery that cannot be
// recorded is not acknowledged (Socket Mode) or answered 503 (HTTP), so
// Slack sends it again.
//
// A click or a slash command is not retried by Slack: it is queued and
// acknowledged when handled, or at AckWithin even when its handling goes
// on (withholding the answer would only show the user a false error).

// accept records event in and queues its handling, without waiting for
// room in a full queue when the delivery is recorded (the recovery pass
// handles one left over), and reports whether it may be acknowledged:
// once recorded, or, for a handler that keeps no receipts, once queued.
func (t *Transport) accept(ctx context.Context, h bot.Handler, in bot.Inbound, deadline time.Time) bool {
	rctx, cancel := context.WithDeadline(ctx, deadline)
	run, recorded, err := bot.Receive(rctx, h, in)
	cancel()
	if err != nil {
		t.log.Warn("slack: recording an event failed; leaving it unacknowledged for Slack to retry", "event", in.EventID, "err", err)
		return false
	}
	if run == nil {
		return true // handled already, or under way elsewhere
	}
	if recorded {
		deadline = time.Now() // do not hold the acknowledgement for room
	}
	if !t.enqueue(ctx, deadline, func(ctx context.Context) { run(ctx) }) {
		if recorded {
			t.log.Warn("slack: intake queue full; an event recorded and acknowledged is left to the relay's recovery pass", "event", in.EventID)
			return true
		}
		t.log.Warn("slack: intake queue full; leaving the event unacknowledged for Slack to redeliver", "event", in.EventID)
		return false
	}
	return true
}

// flight is a click or a command being handled; done closes when its
// handler has returned.
type flight struct{ done chan struct{} }

// deliver queues fn (a click's or a command's handling) for a worker,
// waiting for room in a full queue no later than deadline, and returns
// its flight; nil when it was not queued.
func (t *Transport) deliver(ctx context.Context, deadline time.Time, fn func(context.Context)) *flight {
	f := &flight{done: make(chan struct{})}
	if !t.enqueue(ctx, deadline, func(ctx context.Context) { fn(ctx); close(f.done) }) {
		return nil
	}
	return f
}

// wait waits for f's handler to return, no later than deadline.
func (f *flight) wait(deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-f.done:
	case <-timer.C:
	}
}
