package maintenance

import (
	"context"
	"log/slog"
	"time"
)

// ScheduleTickerConfig configures a ScheduleTicker; every field but Log
// is required.
type ScheduleTickerConfig struct {
	// Interval is the time between two ticks. It bounds how late a run
	// starts, not whether it does: firing is decided in the store.
	Interval time.Duration
	// Leads gates each tick: only the leader looks at the schedules.
	Leads Leads
	// Tick settles finished runs and fires, skips or misses what is due
	// (a ScheduleFirer's, handed the service's intake to submit the runs).
	Tick func(ctx context.Context) error
	Log  *slog.Logger
}

// ScheduleTicker wakes the schedules on the leader. It only wakes them:
// whether an occurrence fires is a compare-and-swap in the store, so a
// restart or a second node changes nothing about which occurrences run.
type ScheduleTicker struct {
	cfg  ScheduleTickerConfig
	loop loop
}

// NewScheduleTicker builds a ticker; Start runs it.
func NewScheduleTicker(cfg ScheduleTickerConfig) *ScheduleTicker {
	cfg.Log = quiet(cfg.Log)
	return &ScheduleTicker{cfg: cfg}
}

// Start ticks every Interval until ctx ends or Stop.
func (s *ScheduleTicker) Start(ctx context.Context) { s.loop.start(ctx, s.cfg.Interval, s.pass) }

// Stop ends the loop and waits for a tick under way.
func (s *ScheduleTicker) Stop() { s.loop.stop() }

func (s *ScheduleTicker) pass(ctx context.Context) {
	if !s.cfg.Leads(ctx) {
		return
	}
	if err := s.cfg.Tick(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Log.Error("runner: schedules", "err", err)
	}
}
