// Package backoff computes retry delays: bounded exponential backoff with
// full jitter, where a server-imposed minimum (such as a Retry-After header)
// acts as a floor. Full jitter spreads the retries of many clients that
// failed together, so they do not all come back at the same instant.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy describes a backoff schedule. The zero value is usable: it never
// waits longer than the floor it is given.
type Policy struct {
	// Base is the upper bound of the first delay (attempt 0).
	Base time.Duration
	// Cap bounds every jittered delay; a floor may still exceed it.
	Cap time.Duration
	// Rand returns a uniform value in [0, n) for n > 0. Nil means
	// math/rand/v2; tests inject a deterministic source.
	Rand func(n int64) int64
}

// Delay returns the wait before retry number attempt (0 for the first
// retry): a uniformly random duration in [0, min(Cap, Base·2^attempt)],
// raised to floor when shorter. A negative attempt counts as 0. The floor is
// not capped: a server that said how long to wait is obeyed, and callers that
// will not wait that long should give up instead.
func (p Policy) Delay(attempt int, floor time.Duration) time.Duration {
	ceiling := p.ceiling(attempt)
	var d time.Duration
	if ceiling > 0 {
		rnd := p.Rand
		if rnd == nil {
			rnd = rand.Int64N
		}
		d = time.Duration(rnd(int64(ceiling) + 1))
	}
	return max(d, floor)
}

// ceiling is min(Cap, Base·2^attempt) without overflowing.
func (p Policy) ceiling(attempt int) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	limit := p.Cap
	if limit <= 0 {
		limit = p.Base
	}
	c := p.Base
	for i := 0; i < attempt && c < limit; i++ {
		c *= 2 // Base <= limit/2 here, so this cannot overflow past 2·limit
	}
	return min(c, limit)
}

// Sleep waits for d or until ctx ends, whichever comes first, and returns
// ctx's error in the latter case. A non-positive d returns at once (still
// reporting an already-ended ctx).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
