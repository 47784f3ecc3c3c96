package relay

import (
	"context"
	"sync"
	"time"
)

// pacer spaces writes to one chat channel: platforms allow about one
// message per second per channel, and a burst beyond that is refused.
// Every post and edit reserves a slot; status edits that find no free slot
// are coalesced by their watcher instead of queued.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     map[string]time.Time
	now      func() time.Time
}

func newPacer(interval time.Duration, now func() time.Time) *pacer {
	return &pacer{interval: interval, next: map[string]time.Time{}, now: now}
}

// try takes the channel's slot if it is free and returns 0, else returns
// how long until it is.
func (p *pacer) try(key string, interval time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if n := p.next[key]; n.After(now) {
		return n.Sub(now)
	}
	p.next[key] = now.Add(max(interval, p.interval))
	return 0
}

// wait takes the next slot of the channel, waiting for it.
func (p *pacer) wait(ctx context.Context, key string, interval time.Duration) error {
	p.mu.Lock()
	now := p.now()
	at := later(p.next[key], now)
	p.next[key] = at.Add(max(interval, p.interval))
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// penalize pushes the channel's next slot back after the platform said
// "too many requests".
func (p *pacer) penalize(key string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at := p.now().Add(d); at.After(p.next[key]) {
		p.next[key] = at
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
