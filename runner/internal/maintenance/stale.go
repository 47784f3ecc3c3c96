package maintenance

import (
	"context"
	"log/slog"
	"time"

	"reasonix/runner/store"
)

// StaleReclaimerConfig configures a StaleReclaimer. Running, Dead and
// TakeOver are required.
type StaleReclaimerConfig struct {
	// Interval is how often the reclaimer looks at the clock; required.
	Interval time.Duration
	// Every is the time between two scans, on Now; required.
	Every time.Duration
	// Now is the clock of Every; nil is time.Now.
	Now func() time.Time
	// Running lists the running tasks of every node.
	Running func(ctx context.Context) ([]store.RunningTask, error)
	// Dead reports whether a running task's node died: its heartbeat is
	// stale and it does not run here.
	Dead func(t store.RunningTask) bool
	// TakeOver hands a dead node's task to the queue again.
	TakeOver func(ctx context.Context, t store.RunningTask) error
	// Parked, when set, gives a job back to the parked tasks (waiting for
	// an approval or CI) whose job died with their node, after each scan.
	Parked func(ctx context.Context) error
	Log    *slog.Logger
}

// StaleReclaimer takes over, on every node, the running tasks whose node
// stopped sending heartbeats. It does not wait for the leader: the dead
// node may have been the leader, and an election takes up to 20 s.
type StaleReclaimer struct {
	cfg  StaleReclaimerConfig
	loop loop
	last time.Time // the last scan, or when the reclaimer was built
}

// NewStaleReclaimer builds a reclaimer; Start runs it. Its first scan is
// Every after now: a node just started has recovered its own tasks, and a
// heartbeat goes stale only after a while anyway.
func NewStaleReclaimer(cfg StaleReclaimerConfig) *StaleReclaimer {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	return &StaleReclaimer{cfg: cfg, last: cfg.Now()}
}

// Start scans every Every until ctx ends or Stop.
func (r *StaleReclaimer) Start(ctx context.Context) { r.loop.start(ctx, r.cfg.Interval, r.pass) }

// Stop ends the loop and waits for a scan under way.
func (r *StaleReclaimer) Stop() { r.loop.stop() }

func (r *StaleReclaimer) pass(ctx context.Context) {
	if now := r.cfg.Now(); now.Sub(r.last) >= r.cfg.Every {
		r.last = now
		r.scan(ctx)
	}
}

func (r *StaleReclaimer) scan(ctx context.Context) {
	running, err := r.cfg.Running(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Warn("runner: stale task sweep", "err", err)
		}
		return
	}
	for _, t := range running {
		if r.cfg.Dead(t) {
			if err := r.cfg.TakeOver(ctx, t); err != nil {
				r.cfg.Log.Warn("runner: stale task sweep", "task", t.ID, "err", err)
			}
		}
	}
	if r.cfg.Parked != nil {
		if err := r.cfg.Parked(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Log.Warn("runner: stale task sweep", "err", err)
		}
	}
}
