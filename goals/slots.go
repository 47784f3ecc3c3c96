package goals

import "context"

// Children running at once are bounded per task, not per fleet: with
// nested fleets a per-fleet bound alone multiplies (six children each
// running a fleet of six would be 36 sub-agents). The Host holds
// MaxConcurrency slots; a child takes one before its first model request
// and gives it back when it ends. A child that is waiting for its own
// sub-agents (inside task or fleet) gives its slot up meanwhile and takes
// one again afterwards, so the slots go to children that do work and a
// tree of waiting parents cannot hold them all and deadlock.

// hold takes a slot for run, waiting for one (without run's lock: its
// other calls record receipts meanwhile); an error is ctx's. A slot taken
// while a nested call of run started meanwhile is given back at once.
func (h *Host) hold(ctx context.Context, run *childRun) error {
	run.mu.Lock()
	held := run.holds
	run.mu.Unlock()
	if held {
		return nil
	}
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.holds || run.awaiting > 0 {
		<-h.slots
		return nil
	}
	run.holds = true
	return nil
}

// unhold gives run's slot back, if it holds one.
func (h *Host) unhold(run *childRun) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.holds {
		run.holds = false
		<-h.slots
	}
}

// awaitChildren gives run's slot up while it waits for its own sub-agents
// (a nested task or fleet); the returned func takes a slot again. Nested
// calls of one child running side by side share the one slot: it is given
// up by the first and taken again after the last.
func (h *Host) awaitChildren(ctx context.Context, run *childRun) (resume func()) {
	if run == nil {
		return func() {}
	}
	run.mu.Lock()
	run.awaiting++
	first := run.awaiting == 1
	run.mu.Unlock()
	if first {
		h.unhold(run)
	}
	return func() {
		run.mu.Lock()
		run.awaiting--
		last := run.awaiting == 0
		run.mu.Unlock()
		if last {
			// On an error (ctx ended) the child stops at its next step;
			// runChild's unhold then has nothing to give back.
			_ = h.hold(ctx, run)
		}
	}
}
