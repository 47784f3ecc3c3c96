package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Several serve nodes share one store, and some chat work must be done by
// one of them at a time: relaying a task's thread, long-polling Telegram.
// A lease in the store names the node doing it; the holder renews it, and
// when the holder dies the lease runs out and another node claims it.

// Lease is one lease in the store shared by the serve nodes, seen by one
// of them (the owner is part of the implementation).
type Lease interface {
	// Claim takes the lease for ttl from now, or renews it when this node
	// holds it already; false while another node's lease runs.
	Claim(ctx context.Context, ttl time.Duration) (bool, error)
	// Release gives the lease up so another node may take it at once; it
	// leaves another node's lease alone.
	Release(ctx context.Context) error
}

// ErrLeaseHeld is Hold's answer when another node holds the lease.
var ErrLeaseHeld = errors.New("bot: another node holds the lease")

// Hold runs fn while this node holds l, and gives l up after. fn's context
// ends when ctx does or when the lease is lost: another node took it, or
// it could not be renewed for half its ttl — so fn stops before the lease
// runs out and another node may start. name says what the lease is for in
// the log.
func Hold(ctx context.Context, l Lease, ttl time.Duration, log *slog.Logger, name string, fn func(context.Context) error) error {
	ok, err := claim(ctx, l, ttl)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLeaseHeld
	}
	held, lost := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		renew(held, lost, l, ttl, log, name)
	}()
	err = fn(held)
	lost()
	<-renewed
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if rerr := l.Release(rctx); rerr != nil {
		log.Warn("bot: releasing a lease", "lease", name, "err", rerr)
	}
	return err
}

// claim bounds one claim by a third of the ttl: a claim that hangs on a
// stuck database must not outlive the lease it renews.
func claim(ctx context.Context, l Lease, ttl time.Duration) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, ttl/3)
	defer cancel()
	return l.Claim(cctx, ttl)
}

// renew renews the lease every third of its ttl and calls lost when the
// lease is lost or could not be renewed for half of it.
func renew(ctx context.Context, lost context.CancelFunc, l Lease, ttl time.Duration, log *slog.Logger, name string) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := claim(ctx, l, ttl)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && ok:
			lastOK = time.Now()
			continue
		case err == nil:
			log.Warn("bot: another node took the lease over", "lease", name)
		case time.Since(lastOK) < ttl/2:
			continue // a blip: the lease still runs
		default:
			log.Warn("bot: could not renew the lease; giving it up", "lease", name, "err", err)
		}
		lost()
		return
	}
}
