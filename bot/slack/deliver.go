package slack

import (
	"context"
	"time"
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

// flight is an event being handled on this node; done closes when its
// handler has returned.
type flight struct {
	done    chan struct{}
	started time.Time
}

// joinFor is how long a retry may wait on a handler at work here rather
// than go to the relay: long enough for Slack's first retry (it comes
// seconds after the timeout), short of its later ones (1 and 5 minutes),
// so a handler that hangs here holds back only the first retry, and a
// later one reaches the relay, whose claim then hands the event over.
const joinFor = 30 * time.Second

// deliver queues fn (the handling of event key) for a worker, waiting for
// room in a full queue no later than deadline, and returns a channel that
// closes once fn has returned; nil when it was not queued.
//
// A retry of an event this node is still handling (same key, for up to
// joinFor) is not queued again: it shares the first delivery's channel,
// so it holds no worker while it waits (the relay's claim would make it
// wait anyway), and a slow event retried by Slack cannot take up the
// pool. An empty key (a click, a command) is never shared.
func (t *Transport) deliver(ctx context.Context, key string, deadline time.Time, fn func(context.Context)) <-chan struct{} {
	if key != "" {
		t.flightMu.Lock()
		if f, ok := t.flights[key]; ok && time.Since(f.started) < joinFor {
			t.flightMu.Unlock()
			t.log.Debug("slack: a retry waits for its event's handling under way", "event", key)
			return f.done
		}
		f := &flight{done: make(chan struct{}), started: time.Now()}
		t.flights[key] = f
		t.flightMu.Unlock()
		job := func(ctx context.Context) {
			defer t.land(key, f, true)
			fn(ctx)
		}
		if !t.enqueue(ctx, deadline, job) {
			t.land(key, f, false)
			return nil
		}
		return f.done
	}
	done := make(chan struct{})
	if !t.enqueue(ctx, deadline, func(ctx context.Context) { defer close(done); fn(ctx) }) {
		return nil
	}
	return done
}

// land ends key's flight: a later delivery of it is queued afresh (and
// the relay drops it if it was handled). A flight that was never queued
// leaves done open, so a retry that joined it is not acknowledged.
func (t *Transport) land(key string, f *flight, handled bool) {
	t.flightMu.Lock()
	if t.flights[key] == f {
		delete(t.flights, key)
	}
	t.flightMu.Unlock()
	if handled {
		close(f.done)
	}
}

// handledBy reports whether done closes before deadline.
func handledBy(done <-chan struct{}, deadline time.Time) bool {
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-done:
		return true
	case <-wait.C:
		// A handler finishing just as the timer fires still counts.
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}
