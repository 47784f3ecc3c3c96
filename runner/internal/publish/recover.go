package publish

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"reasonix/runner/store"
)

// DefaultRecoverInterval is how often a Recoverer looks for publish
// records left behind.
const DefaultRecoverInterval = 30 * time.Second

// RecovererConfig configures a Recoverer.
type RecovererConfig struct {
	Interval time.Duration // DefaultRecoverInterval when zero
	// Due lists tasks whose publish has work left and no live lease
	// (store.DuePublishes).
	Due func(ctx context.Context, limit int) ([]string, error)
	// Drive publishes one task (building its Target and calling
	// Publisher.Drive).
	Drive  func(ctx context.Context, taskID string) error
	Logger *slog.Logger
}

// Recoverer drives, now and then, the publish records a crashed or
// failing publisher left behind: the one place a publish interrupted
// after its task succeeded is finished. Every node may run one; leases
// keep them from driving a record twice at once.
type Recoverer struct {
	cfg  RecovererConfig
	log  *slog.Logger
	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// NewRecoverer returns a stopped Recoverer.
func NewRecoverer(cfg RecovererConfig) *Recoverer {
	cfg.Interval = cmp.Or(cfg.Interval, DefaultRecoverInterval)
	return &Recoverer{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default())}
}

// Start runs a pass at once (a restarted node finishes what it left) and
// then every Interval after the last pass ended, until Stop or ctx ends.
func (r *Recoverer) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return
	}
	ctx, r.stop = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.Pass(ctx)
			t.Reset(r.cfg.Interval)
		}
	}(r.done)
}

// Stop ends the loop and waits for a pass under way.
func (r *Recoverer) Stop() {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop, r.done = nil, nil
	r.mu.Unlock()
	if done != nil {
		stop()
		<-done
	}
}

// Pass drives every due record once.
func (r *Recoverer) Pass(ctx context.Context) {
	ids, err := r.cfg.Due(ctx, 50)
	if err != nil {
		r.log.Warn("publish: listing due publishes", "err", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if err := r.cfg.Drive(ctx, id); err != nil && !errors.Is(err, store.ErrPublishBusy) {
			r.log.Warn("publish: a retried publish failed", "task", id, "err", err)
		}
	}
}
