package slack

import (
	"context"
	"time"

	"reasonix/bot"
)

// A delivery is acknowledged to Slack only once the relay has handled it
// (HandleMessage returned), never merely because it was queued or
// claimed: Slack does not send an acknowledged event again, so a node
// killed between an early acknowledgement and the relay's action would
// lose it. When handling takes longer than AckWithin the delivery is left
// unacknowledged (Socket Mode) or answered 503 (HTTP mode), and Slack
// retries it; the relay's two-phase claim makes that retry safe: one
// arriving while the first handler works is dropped once it finishes, one
// arriving after that handler died is handled again once its claim is
// stale.

// flight is a delivery being handled on this node; done closes when its
// handler has returned, ok then says whether the handler is done with it
// (see finisher).
type flight struct {
	done    chan struct{}
	ok      bool
	started time.Time
}

// finisher is a handler that says whether it is done with a message: the
// relay is one. A message it is not done with (its store failed; it left
// the delivery claimed for a redelivery) is left for Slack to retry, as
// one still being handled is.
type finisher interface {
	HandleDelivery(ctx context.Context, in bot.Inbound) bool
}

// handleMessage is h's handling of in, which reports whether h is done
// with it (a plain bot.Handler always is once it returns).
func handleMessage(h bot.Handler, in bot.Inbound) func(context.Context) bool {
	if f, ok := h.(finisher); ok {
		return func(ctx context.Context) bool { return f.HandleDelivery(ctx, in) }
	}
	return func(ctx context.Context) bool { h.HandleMessage(ctx, in); return true }
}

// joinFor is how long a retry may wait on a handler at work here rather
// than go to the relay: long enough for Slack's first retry (it comes
// seconds after the timeout), short of its later ones (1 and 5 minutes),
// so a handler that hangs here holds back only the first retry, and a
// later one reaches the relay, whose claim then hands the event over.
const joinFor = 30 * time.Second

// deliver queues fn (the handling of event key) for a worker, waiting for
// room in a full queue no later than deadline, and returns its flight;
// nil when it was not queued.
//
// A retry of an event this node is still handling (same key, for up to
// joinFor) is not queued again: it shares the first delivery's flight,
// so it holds no worker while it waits (the relay's claim would make it
// wait anyway), and a slow event retried by Slack cannot take up the
// pool. An empty key (a click, a command) is never shared.
func (t *Transport) deliver(ctx context.Context, key string, deadline time.Time, fn func(context.Context) bool) *flight {
	f := &flight{done: make(chan struct{}), started: time.Now()}
	if key != "" {
		t.flightMu.Lock()
		if g, ok := t.flights[key]; ok && time.Since(g.started) < joinFor {
			t.flightMu.Unlock()
			t.log.Debug("slack: a retry waits for its event's handling under way", "event", key)
			return g
		}
		t.flights[key] = f
		t.flightMu.Unlock()
	}
	job := func(ctx context.Context) {
		ok := fn(ctx)
		t.land(key, f)
		f.ok = ok
		close(f.done)
	}
	if !t.enqueue(ctx, deadline, job) {
		// Never closed: a retry that joined it is not acknowledged.
		t.land(key, f)
		return nil
	}
	return f
}

// land ends key's flight: a later delivery of it is queued afresh (and
// the relay drops it if it was handled).
func (t *Transport) land(key string, f *flight) {
	if key == "" {
		return
	}
	t.flightMu.Lock()
	if t.flights[key] == f {
		delete(t.flights, key)
	}
	t.flightMu.Unlock()
}

// handledBy reports whether f's handler returned before deadline and is
// done with the delivery.
func handledBy(f *flight, deadline time.Time) bool {
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-f.done:
		return f.ok
	case <-wait.C:
		// A handler finishing just as the timer fires still counts.
		select {
		case <-f.done:
			return f.ok
		default:
			return false
		}
	}
}
