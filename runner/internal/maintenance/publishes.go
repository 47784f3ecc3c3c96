package maintenance

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"reasonix/runner/store"
)

// DefaultPublishRetryInterval is how often a PublishRetrier looks for
// publish records left behind.
const DefaultPublishRetryInterval = 30 * time.Second

// PublishRetrierConfig is what a PublishRetrier is handed.
type PublishRetrierConfig struct {
	Interval time.Duration // DefaultPublishRetryInterval when zero
	// Due lists tasks whose publish has work left and no live lease
	// (store.DuePublishes).
	Due func(ctx context.Context, limit int) ([]string, error)
	// Drive publishes one task (the service builds its target and drives
	// the publish record).
	Drive func(ctx context.Context, taskID string) error
	Log   *slog.Logger
}

// PublishRetrier drives, at start and then every Interval, the publish
// records a crashed or failing publisher left behind: the one place a
// publish interrupted after its task succeeded is finished. Every node
// runs one; the records' leases keep two from driving one record at once.
type PublishRetrier struct {
	cfg  PublishRetrierConfig
	log  *slog.Logger
	loop loop
}

// NewPublishRetrier returns a stopped PublishRetrier.
func NewPublishRetrier(cfg PublishRetrierConfig) *PublishRetrier {
	cfg.Interval = cmp.Or(cfg.Interval, DefaultPublishRetryInterval)
	return &PublishRetrier{cfg: cfg, log: quiet(cfg.Log)}
}

// Start runs a pass at once (a restarted node finishes what it left) and
// then Interval after each pass, until Stop or ctx ends.
func (r *PublishRetrier) Start(ctx context.Context) {
	r.loop.startAfter(ctx, 0, r.cfg.Interval, r.pass)
}

// Stop ends the loop and waits for a pass under way.
func (r *PublishRetrier) Stop() { r.loop.stop() }

// pass drives every due record once (at most 50 a pass).
func (r *PublishRetrier) pass(ctx context.Context) {
	ids, err := r.cfg.Due(ctx, 50)
	if err != nil {
		r.log.Warn("maintenance: listing due publishes", "err", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if err := r.cfg.Drive(ctx, id); err != nil && !errors.Is(err, store.ErrPublishBusy) {
			r.log.Warn("maintenance: a retried publish failed", "task", id, "err", err)
		}
	}
}
