package maintenance

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"reasonix/runner/store"
)

// ApprovalStore is what the expirer needs of the store.
type ApprovalStore interface {
	// ExpireApprovals marks the pending approvals whose deadline is
	// before now expired and returns them.
	ExpireApprovals(ctx context.Context, now time.Time) ([]store.Approval, error)
	// Wake lets the task's parked job run now.
	Wake(ctx context.Context, taskID string) error
}

// ApprovalExpirerConfig configures an ApprovalExpirer.
type ApprovalExpirerConfig struct {
	// Interval is the time between two passes; required.
	Interval time.Duration
	// Now is the clock deadlines are compared with; nil is time.Now.
	Now func() time.Time
	// Leads gates each pass: only the leader expires; required.
	Leads Leads
	// Expired is called for each approval a pass expired, before its task
	// is woken (the service counts it and writes its event); optional.
	Expired func(ctx context.Context, a store.Approval)
	Log     *slog.Logger
}

// ApprovalExpirer expires unanswered approvals on the leader and wakes
// their tasks, whose runs then refuse the calls with code expired.
type ApprovalExpirer struct {
	cfg    ApprovalExpirerConfig
	st     ApprovalStore
	loop   loop
	passes atomic.Int64
}

// NewApprovalExpirer builds an expirer over st; Start runs it.
func NewApprovalExpirer(st ApprovalStore, cfg ApprovalExpirerConfig) *ApprovalExpirer {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	return &ApprovalExpirer{cfg: cfg, st: st}
}

// Start runs a pass every Interval until ctx ends or Stop.
func (e *ApprovalExpirer) Start(ctx context.Context) { e.loop.start(ctx, e.cfg.Interval, e.pass) }

// Stop ends the loop and waits for a pass under way.
func (e *ApprovalExpirer) Stop() { e.loop.stop() }

// Passes counts the passes this node ran as the leader.
func (e *ApprovalExpirer) Passes() int64 { return e.passes.Load() }

func (e *ApprovalExpirer) pass(ctx context.Context) {
	if !e.cfg.Leads(ctx) {
		return
	}
	e.passes.Add(1)
	expired, err := e.st.ExpireApprovals(ctx, e.cfg.Now())
	if err != nil {
		if ctx.Err() == nil {
			e.cfg.Log.Warn("runner: approval sweep", "err", err)
		}
		return
	}
	for _, a := range expired {
		if e.cfg.Expired != nil {
			e.cfg.Expired(ctx, a)
		}
		if err := e.st.Wake(ctx, a.TaskID); err != nil && ctx.Err() == nil {
			e.cfg.Log.Warn("runner: wake after expiry", "task", a.TaskID, "err", err)
		}
	}
}
