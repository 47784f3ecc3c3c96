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
	// bucket mirrors the platform's own limit per channel (a burst of
	// paceBurst writes, one more per interval): it tells when an urgent
	// write may come early without being refused.
	bucket map[string]tokens
	now    func() time.Time
}

// paceBurst is the burst the platforms tolerate on one channel: Slack
// documents short bursts over its one write per second.
const paceBurst = 3

type tokens struct {
	n  float64
	at time.Time
}

// tokensAt is the channel's bucket at t (full when never written).
func (p *pacer) tokensAt(key string, t time.Time, interval time.Duration) tokens {
	b, ok := p.bucket[key]
	if !ok {
		return tokens{n: paceBurst, at: t}
	}
	if t.After(b.at) {
		b.n = min(paceBurst, b.n+float64(t.Sub(b.at))/float64(interval))
		b.at = t
	}
	return b
}

// spend takes one token of the channel's bucket at t.
func (p *pacer) spend(key string, t time.Time, interval time.Duration) {
	b := p.tokensAt(key, t, interval)
	b.n--
	p.bucket[key] = b
}

func newPacer(interval time.Duration, now func() time.Time) *pacer {
	return &pacer{interval: interval, next: map[string]time.Time{}, bucket: map[string]tokens{}, now: now}
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
	iv := max(interval, p.interval)
	p.next[key] = now.Add(iv)
	p.spend(key, now, iv)
	return 0
}

// wait takes the next slot of the channel, waiting for it. An urgent write
// (an approval request and the status edit that announces it) may follow
// the channel's previous write after half the interval when the channel
// has been quiet enough for the platform's burst allowance to take it
// (two writes to spare in the mirrored bucket): a person waiting on a
// request should not wait a second more for each write before it. It
// pushes the writes after it back as a normal one does, so the sustained
// rate stays within the interval.
func (p *pacer) wait(ctx context.Context, key string, interval time.Duration, urgent bool) error {
	p.mu.Lock()
	now := p.now()
	iv := max(interval, p.interval)
	at := later(p.next[key], now)
	if early := later(p.next[key].Add(-iv/2), now); urgent && early.Before(at) && p.tokensAt(key, early, iv).n >= 2 {
		at = early
	}
	p.next[key] = at.Add(iv)
	p.spend(key, at, iv)
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
	p.bucket[key] = tokens{at: p.now()} // the platform says it is empty
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
