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
	// NextApprovalDeadline is the earliest deadline of a pending
	// approval, zero when none has one.
	NextApprovalDeadline(ctx context.Context) (time.Time, error)
	// ApprovalDeadlines receives when this process stores an approval
	// with a deadline; stop ends the subscription.
	ApprovalDeadlines() (ch <-chan struct{}, stop func())
	// Wake lets the task's parked job run now.
	Wake(ctx context.Context, taskID string) error
}

// ApprovalExpirerConfig configures an ApprovalExpirer.
type ApprovalExpirerConfig struct {
	// Interval bounds the wait between two looks; required. The expirer
	// waits for the next pending deadline, or until this process stores
	// an approval with one; Interval is the fallback that finds one
	// stored by another node, or pending when this node became the
	// leader.
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
// their tasks, whose runs then refuse the calls with code expired. It
// does not sweep on a timer: each look reads the next pending deadline
// (one small read) and the expirer sleeps until then, so an idle node
// reads once per Interval and writes nothing.
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

// Start looks Interval after it is called, then as each look says, until
// ctx ends or Stop.
func (e *ApprovalExpirer) Start(ctx context.Context) {
	wake, stop := e.st.ApprovalDeadlines()
	e.loop.startWaiting(ctx, e.cfg.Interval, e.pass, wake, stop)
}

// Stop ends the loop and waits for a pass under way.
func (e *ApprovalExpirer) Stop() { e.loop.stop() }

// Passes counts the passes this node ran as the leader.
func (e *ApprovalExpirer) Passes() int64 { return e.passes.Load() }

// pass expires what is due, when this node leads, and says how long to
// wait for the next look: until the next deadline, at most Interval.
func (e *ApprovalExpirer) pass(ctx context.Context) time.Duration {
	if !e.cfg.Leads(ctx) {
		return e.cfg.Interval
	}
	e.passes.Add(1)
	next, err := e.st.NextApprovalDeadline(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.cfg.Log.Warn("runner: approval deadlines", "err", err)
		}
		return e.cfg.Interval
	}
	now := e.cfg.Now()
	switch {
	case next.IsZero():
		return e.cfg.Interval
	case next.After(now):
		return min(next.Sub(now), e.cfg.Interval)
	}
	expired, err := e.st.ExpireApprovals(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			e.cfg.Log.Warn("runner: approval sweep", "err", err)
		}
		return e.cfg.Interval
	}
	for _, a := range expired {
		if e.cfg.Expired != nil {
			e.cfg.Expired(ctx, a)
		}
		if err := e.st.Wake(ctx, a.TaskID); err != nil && ctx.Err() == nil {
			e.cfg.Log.Warn("runner: wake after expiry", "task", a.TaskID, "err", err)
		}
	}
	return 0 // look at once for the deadline after these
}
