package taskrun

import (
	"context"
	"errors"
	"time"

	"reasonix/agent"
	"reasonix/runner/store"
)

// A run writes each step of its conversation as one store transaction
// (store.WriteStep) instead of one per record: the assistant message that
// asks for a call is held until the call's journal entry is started, and
// both go together, with the events queued so far. The tool message that
// answers a call is held too, with the call's journal outcome, and goes
// with the next write — the next call's start with the model's next
// answer, or that answer alone — so a step of the steady state is one
// commit: the previous call's result and outcome, the assistant message,
// the next call's start and the events between them.
//
// A crash before the first of these writes loses only the model's answer,
// which a resumed run asks for again: no call of it had started. A crash
// while a result is held leaves its call started and unfinished in the
// journal, as a crash while the call ran would: recovery settles it
// (execute.Settle) — a writer is reported to the model as having an
// unknown outcome, never run twice. A result is held at most StepLinger:
// a model that takes longer to answer does not keep it (or the events
// around it) from the store and the task's watchers any longer than that.

// StepLinger is how long a run holds a tool result for its next step's
// write before writing it on its own: longer than a fast model takes to
// answer, short enough that a watcher of the task does not notice.
const StepLinger = time.Second

// holdAssistant keeps m, an assistant message that asks for calls, to be
// written with the first of them (writeStep), and returns the number it
// will have in the conversation.
func (r *Run) holdAssistant(m agent.Message) int64 {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.held = append(r.held, m)
	return r.stored + int64(len(r.held))
}

// holdable reports whether m may wait for the run's next step write
// (holdMessage): a tool message (see above), or the opening message of a
// conversation that has nothing stored — a crash before the next write
// leaves nothing stored, and the resumed run opens the conversation again
// from the task, as this one did.
func (r *Run) holdable(m agent.Message) bool {
	if r.events == nil {
		return false // no queue to hold the events with it
	}
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	return m.Role == agent.RoleTool || (m.Role == agent.RoleUser && r.stored == 0 && len(r.held) == 0)
}

// holdMessage keeps m and done, the journal outcome of the call a tool
// message answers, to be written with the run's next step write, at most
// StepLinger from now (see above).
func (r *Run) holdMessage(ctx context.Context, m agent.Message, done []store.CallOutcome) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.held = append(r.held, m)
	r.heldDone = append(r.heldDone, done...)
	if r.linger == nil {
		r.linger = time.AfterFunc(StepLinger, func() { r.flushHeld(ctx) })
	}
	// The events between now and the next write go with it too; a little
	// longer than the linger, so they are the flush's if it comes to that.
	r.events.Hold(StepLinger + StepLinger/4)
}

// writeStep writes msgs (after any held message), the journal outcomes
// done (after any held outcome) and the journal start of start, with the
// run's queued events, in one transaction. A failure leaves held messages
// and outcomes held, so the run's end (SettleOutcomes) tries them again;
// the events go on their own. The task's control state the write read
// spares the control loop its next poll (control), or wakes it when there
// is something to do.
func (r *Run) writeStep(ctx context.Context, msgs []agent.Message, done []store.CallOutcome, start *store.JournalCall) (store.StepResult, error) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	all := append(r.held[:len(r.held):len(r.held)], msgs...)
	finish := append(r.heldDone[:len(r.heldDone):len(r.heldDone)], done...)
	var evs []store.EventInput
	if r.events != nil {
		evs = r.events.Take()
	}
	res, err := r.s.Store.WriteStep(ctx, r.task.ID, store.Step{After: r.stored, Messages: all, Finish: finish, Start: start, Events: evs})
	if r.events != nil {
		r.events.Taken(evs, err == nil)
	}
	if err != nil {
		return res, err
	}
	r.stored, r.held, r.heldDone = res.Seq, nil, nil
	if r.linger != nil {
		r.linger.Stop()
		r.linger = nil
	}
	if res.Cancel || res.Inbox {
		r.Poke()
	} else {
		r.mu.Lock()
		r.controlSeen = time.Now() // the ticker's clock, not a test's frozen one
		r.mu.Unlock()
	}
	if len(evs) > 0 {
		r.s.Notify(r.task.ID)
	}
	return res, nil
}

// SetStored sets how many messages the stored conversation has, when the
// run reads it.
func (r *Run) SetStored(n int) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.stored = int64(n)
}

// flushHeld writes what the run holds: tool results whose next step has
// not come within StepLinger, or that the run's end leaves, and an
// assistant message whose calls never started (a refusal ended the batch,
// the run stopped, or it waits for an approval): the transcript keeps the
// question, and a resumed run finds its calls without journal entries and
// runs them.
func (r *Run) flushHeld(ctx context.Context) {
	r.stepMu.Lock()
	n := len(r.held) + len(r.heldDone)
	r.stepMu.Unlock()
	if n == 0 {
		return
	}
	res, err := r.writeStep(ctx, nil, nil, nil)
	if err != nil {
		r.s.Log.Error("runner: saving a message failed", "task", r.task.ID, "err", err)
		return
	}
	for _, key := range res.Missed {
		r.s.Log.Error("runner: journal finish: no unfinished entry", "task", r.task.ID, "call", key)
	}
}

// takeHeld removes and returns the held outcomes, for the run's end to
// record on their own when their messages could not be written; it stops
// the linger.
func (r *Run) takeHeld() []store.CallOutcome {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	if r.linger != nil {
		r.linger.Stop()
		r.linger = nil
	}
	done := r.heldDone
	r.heldDone = nil
	return done
}

// errNotRun is why a call was not run: the run was stopped first.
var errNotRun = errors.New("not run: the run was stopped before this call")

// errNotJournaled is why a call was not run: its journal entry could not
// be written.
var errNotJournaled = errors.New("the call was not run: it could not be recorded in the task's journal")
