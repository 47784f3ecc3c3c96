package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"reasonix/agent"
)

// Manager runs the configured MCP servers and hands out their tools. One
// Manager is shared by every run of a session (sub-agents included), so
// stateful servers keep their state and serial servers are serialised across
// all of them. Its methods are safe for concurrent use.
type Manager struct {
	cfg     Config
	servers []*server // in configuration order

	life   context.Context // cancelled by Stop: aborts starts in flight
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce sync.Once
	stopOnce  sync.Once
}

// New validates cfg and returns a Manager that has started nothing yet.
// Every invalid server is reported, one error per field, joined.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg}
	m.life, m.cancel = context.WithCancel(context.Background())
	for _, sc := range cfg.Servers {
		s := &server{cfg: sc, m: m, state: StateStarting}
		if sc.Concurrency == Serial {
			s.sem = make(chan struct{}, 1)
		}
		m.servers = append(m.servers, s)
	}
	return m, nil
}

// Start launches every server in the background and returns at once; ctx
// bounds only this call. Each server becomes ready or fails within its
// startup timeout; use WaitReady to wait for that. Calling Start again does
// nothing.
func (m *Manager) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mcp: start: %w", err)
	}
	m.startOnce.Do(func() {
		for _, s := range m.servers {
			s.mu.Lock()
			s.startLocked()
			s.mu.Unlock()
		}
	})
	return nil
}

// WaitReady blocks until no server is starting any more (each is ready or
// failed) or ctx ends, whichever comes first. It returns ctx's error in the
// second case; failed servers are reported by Status, not here.
func (m *Manager) WaitReady(ctx context.Context) error {
	for _, s := range m.servers {
		s.mu.Lock()
		wait := s.connecting
		s.mu.Unlock()
		if wait == nil {
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("mcp: waiting for servers: %w", ctx.Err())
		}
	}
	return nil
}

// Status lists every server in configuration order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// Tools returns the adapted tools of every server that has been ready at
// least once, in configuration and listing order. progress receives their
// progress notifications; nil drops them.
func (m *Manager) Tools(progress ProgressFunc) []*Tool {
	var out []*Tool
	for _, s := range m.servers {
		s.mu.Lock()
		listed := s.tools
		s.mu.Unlock()
		for _, t := range listed {
			out = append(out, newTool(s, t, progress))
		}
	}
	return out
}

// AddTools adds Tools(progress) to reg. A tool that cannot be added (its
// normalised name clashes with another, say) is skipped and reported in the
// joined error; the others are still added. It returns how many were added.
func (m *Manager) AddTools(reg *agent.ToolRegistry, progress ProgressFunc) (int, error) {
	var errs []error
	n := 0
	for _, t := range m.Tools(progress) {
		if err := reg.Add(t); err != nil {
			errs = append(errs, fmt.Errorf("mcp: server %q tool %q: %w", t.Server(), t.RemoteName(), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Stop closes every connection and ends every stdio process (with its
// process group), waiting until they are gone. Servers get Config.ShutdownGrace
// to exit on their own; when ctx ends first they are killed at once. Calls in
// flight fail; later calls return ErrClosed. Stop is safe to call more than
// once.
func (m *Manager) Stop(ctx context.Context) error {
	m.stopOnce.Do(func() {
		m.cancel()
		var wg sync.WaitGroup
		for _, s := range m.servers {
			wg.Go(func() { s.shutdown(ctx) })
		}
		wg.Wait()
		m.wg.Wait()
	})
	return nil
}
