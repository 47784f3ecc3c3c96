// Package runnertest starts real runner Services for tests of code built on
// the runner (the HTTP API, the chat bots): a fresh store, a scripted model
// and fast intervals. Import it only from _test.go files.
package runnertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/session"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// Options configure Start. The zero value runs a SQLite store and a
// provider that fails every request.
type Options struct {
	// Open opens the store; nil means storetest.SQLite.
	Open storetest.Opener
	// Store, when set, is used instead of opening one (e.g. two Services
	// sharing a Postgres store).
	Store *store.Store
	// Provider answers every task's model requests.
	Provider agent.Provider
	// ContextWindow is the model's window in tokens; 0 never compacts.
	ContextWindow int
	// Vision says the model takes images (view_image is in its runs).
	Vision bool
	// Settings is the configuration; nil means config.Default() with
	// max_concurrent_tasks = 2.
	Settings *config.Config
	// Now is the clock of the store and the service; nil means time.Now.
	Now func() time.Time
	// Configure may adjust the runner.Config before New.
	Configure func(*runner.Config)
}

// Start builds and starts a Service on a fresh store and stops it when the
// test ends (before the store is closed).
func Start(t testing.TB, o Options) *runner.Service {
	t.Helper()
	st := o.Store
	if st == nil {
		open := o.Open
		if open == nil {
			open = storetest.SQLite
		}
		st = open(t, store.Config{Now: o.Now})
	}
	set := o.Settings
	if set == nil {
		set = config.Default()
		set.Runner.MaxConcurrentTasks = 2
	}
	p := o.Provider
	cfg := runner.Config{
		Store:    st,
		Settings: set,
		Providers: func(string) (session.Model, error) {
			if p == nil {
				return session.Model{}, context.Canceled
			}
			return session.Model{Provider: p, ContextWindow: o.ContextWindow, Vision: o.Vision}, nil
		},
		ScratchDir: t.TempDir(),
		Logger:     storetest.Quiet(),
		Now:        o.Now,
		ShellEnv:   []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()},
		// Inserts and wakes reach the queue in process, so its poll is only
		// the fallback; the cancel/steer check and the approval sweep are
		// what a test waits on, so they stay brisk. Each of these polls is
		// a store query that costs a few milliseconds under -race: at 20ms
		// apiece an idle service took about a third of a core.
		PollInterval:    250 * time.Millisecond,
		ControlInterval: 100 * time.Millisecond,
		SweepInterval:   100 * time.Millisecond,
		// Tests stop services with tasks still running: hand them over at
		// once instead of waiting the production drain.
		DrainTimeout: -1,
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	svc, err := runner.New(cfg)
	if err != nil {
		t.Fatalf("runnertest: New: %v", err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatalf("runnertest: Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		if err := svc.Stop(ctx); err != nil {
			t.Errorf("runnertest: Stop: %v", err)
		}
	})
	return svc
}

// WaitState polls task id until it is in one of states and returns it; the
// test fails after timeout (eventually.DefaultTimeout when zero).
func WaitState(t testing.TB, svc *runner.Service, id string, timeout time.Duration, states ...store.State) store.Task {
	t.Helper()
	var last store.Task
	eventually.NoError(t, timeout, func() error {
		task, err := svc.Task(context.Background(), id)
		if err != nil {
			t.Fatalf("runnertest: task %s: %v", id, err)
		}
		last = task
		if !slices.Contains(states, task.State) {
			return fmt.Errorf("runnertest: task %s is %s, want one of %v", id, task.State, states)
		}
		return nil
	})
	return last
}

// Events returns every event of task id whose type is one of types (all
// when none are given).
func Events(t testing.TB, svc *runner.Service, id string, types ...string) []store.Event {
	t.Helper()
	evs, err := svc.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatalf("runnertest: events of %s: %v", id, err)
	}
	if len(types) == 0 {
		return evs
	}
	var out []store.Event
	for _, e := range evs {
		if slices.Contains(types, e.Type) {
			out = append(out, e)
		}
	}
	return out
}
