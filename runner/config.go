package runner

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"reasonix/config"
	"reasonix/runner/store"
)

// Defaults of Config. Those a configuration file also sets ([serve]
// drain_timeout and stale_after, the [runner] table) are the config
// package's, so that a file, config.Default() and a Config built in code
// mean the same thing.
const (
	// DefaultPollInterval is SQLite's, whose queue notifications never
	// leave the process (so the poll is only a fallback);
	// DefaultPostgresPollInterval is Postgres's, where every insert and
	// every wake notifies the nodes (see store.QueueConfig) but a
	// notification can be lost with a connection. Polls are what an idle
	// node spends its CPU on: 50ms cost it about 2.4% of a core.
	DefaultPollInterval         = 5 * time.Second
	DefaultPostgresPollInterval = time.Second
	DefaultControlInterval      = time.Second
	DefaultHeartbeatInterval    = 10 * time.Second
	DefaultStaleAfter           = config.DefaultStaleAfter
	DefaultSweepInterval        = 2 * time.Second
	DefaultDrainTimeout         = config.DefaultDrainTimeout
	DefaultScratchWait          = 30 * time.Second
	DefaultScheduleInterval     = time.Second
	// DefaultSlotRetry is when a task parked for a free slot of its
	// workspace tries again if no freed slot woke it (slotwake.go). It
	// stays short: a slot freed where no wake is sent (a node that died,
	// whose task another node takes over) is found only by this retry.
	DefaultSlotRetry = 2 * time.Second
	// DefaultCIPollInterval is the fallback poll of a task waiting for CI:
	// the forge's check webhooks wake it at once; the poll covers a forge
	// without webhooks, and a lost delivery, at one API call a task.
	DefaultCIPollInterval = 2 * time.Minute
)

// WithDefaults returns a copy of c with every unset field given its
// default. New applies it; a caller applies it to see the values New will
// use.
func (c Config) WithDefaults() Config {
	if c.Settings == nil {
		c.Settings = config.Default()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Node == "" {
		c.Node = "node-" + newRef() + newRef()
	}
	if c.Version == "" {
		c.Version = buildVersion()
	}
	poll := DefaultPollInterval
	if c.Store != nil && c.Store.Driver() == store.DriverPostgres {
		poll = DefaultPostgresPollInterval
	}
	c.PollInterval = cmp.Or(c.PollInterval, poll)
	c.ControlInterval = cmp.Or(c.ControlInterval, DefaultControlInterval)
	c.SlotRetry = cmp.Or(c.SlotRetry, DefaultSlotRetry)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.StaleAfter = cmp.Or(c.StaleAfter, DefaultStaleAfter)
	c.SweepInterval = cmp.Or(c.SweepInterval, DefaultSweepInterval)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, DefaultDrainTimeout)
	c.ScratchMoveLimit = cmp.Or(c.ScratchMoveLimit, defaultScratchMoveLimit)
	c.ScratchWait = cmp.Or(c.ScratchWait, DefaultScratchWait)
	c.ScheduleInterval = cmp.Or(c.ScheduleInterval, DefaultScheduleInterval)
	c.CIPollInterval = cmp.Or(c.CIPollInterval, DefaultCIPollInterval)
	if c.Workspaces == nil {
		dir := c.ScratchDir
		if dir == "" {
			dir = filepath.Join(cmp.Or(c.Settings.DataDir(), filepath.Join(os.TempDir(), "reasonix")), "scratch")
		}
		c.Workspaces = scratchWorkspaces{root: dir}
	}
	return c
}

// Validate reports the settings New refuses, after defaults: the [runner]
// table by config's own rule (an unset value counts as its default, as in
// a Config built in code), and intervals, which must not be negative
// (DrainTimeout may: it means "hand over at once"). The commands that
// check a configuration (`config check`, `doctor`, `serve`) run it too.
// The Store and Providers, which are wiring rather than settings, New
// checks itself.
func (c Config) Validate() error {
	c = c.WithDefaults()
	r := c.Settings.Runner
	r.MaxConcurrentTasks = cmp.Or(r.MaxConcurrentTasks, config.DefaultMaxConcurrentTasks)
	r.TaskTimeout = cmp.Or(r.TaskTimeout, config.DefaultTaskTimeout)
	r.ApprovalTTL = cmp.Or(r.ApprovalTTL, config.TTL(config.DefaultApprovalTTL))
	var errs []error
	if err := r.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("runner: %w", err))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"PollInterval", c.PollInterval}, {"ControlInterval", c.ControlInterval},
		{"HeartbeatInterval", c.HeartbeatInterval}, {"StaleAfter", c.StaleAfter},
		{"SweepInterval", c.SweepInterval}, {"ScratchWait", c.ScratchWait},
		{"ScheduleInterval", c.ScheduleInterval}, {"CIPollInterval", c.CIPollInterval},
		{"SlotRetry", c.SlotRetry},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("runner: %s must not be negative (got %s)", d.name, d.v))
		}
	}
	if c.ScratchMoveLimit < 0 {
		errs = append(errs, fmt.Errorf("runner: ScratchMoveLimit must not be negative (got %d)", c.ScratchMoveLimit))
	}
	return errors.Join(errs...)
}
