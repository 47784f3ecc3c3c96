// Package maintenance holds the service's background upkeep: the loops
// that expire approvals, prune old chat deliveries, take over the tasks of
// dead nodes, wake and fire the schedules, finish interrupted publishes
// and collect what finished tasks leave behind (gc.go). Each maintainer is a small struct
// with Start and Stop that is handed exactly what it needs — a store
// interface of a method or two, a leader check, a callback into the
// service — and never the service itself, so a loop can be read, and
// tested, without package runner.
//
// A loop waits on a timer that is set again after each pass ends, not on
// a ticker: a slow pass never has another queued behind it, and between
// passes the goroutine is parked. What a pass costs on an idle node is
// each maintainer's business: the clock-gated ones (the pruner, the
// reclaimer) only compare times until their work is due, and the
// leader-only ones ask who leads before touching anything else.
package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Leads reports whether this node is the cluster's elected leader, where
// once-per-cluster maintenance runs. Not knowing must count as no: a pass
// skipped is made up at the next one, a pass run twice on two nodes would
// not be.
type Leads func(ctx context.Context) bool

// loop runs pass every interval until its context ends or stop is called.
// Its zero value is ready to start.
type loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs pass interval after start and then interval after each pass
// ends. Starting a running loop does nothing.
func (l *loop) start(ctx context.Context, interval time.Duration, pass func(context.Context)) {
	l.startAfter(ctx, interval, interval, pass)
}

// startAfter is start with the first pass first after starting (0: at
// once).
func (l *loop) startAfter(ctx context.Context, first, interval time.Duration, pass func(context.Context)) {
	l.startWaiting(ctx, first, func(ctx context.Context) time.Duration { pass(ctx); return interval }, nil, func() {})
}

// startWaiting runs pass first after starting and then after the wait
// each pass returns, or earlier when wake receives (a nil wake never
// does); done is called as the
// loop ends. Starting a running loop does nothing (done is still called).
func (l *loop) startWaiting(ctx context.Context, first time.Duration, pass func(context.Context) time.Duration,
	wake <-chan struct{}, done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		done()
		return
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func(finished chan struct{}) {
		defer close(finished)
		defer done()
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-wake:
				t.Stop()
			}
			t.Reset(pass(ctx))
		}
	}(l.done)
}

// stop cancels the loop's context and waits for a pass under way to
// return. It is idempotent, and a loop never started stops at once.
func (l *loop) stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
}

// quiet returns log, or a logger that drops everything when it is nil.
func quiet(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// now returns clock, or time.Now when it is nil.
func now(clock func() time.Time) func() time.Time {
	if clock == nil {
		return time.Now
	}
	return clock
}
