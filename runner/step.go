package runner

import (
	"context"
	"errors"

	"reasonix/agent"
	"reasonix/runner/store"
)

// A run writes each step of its conversation as one store transaction
// (store.WriteStep) instead of one per record: the assistant message that
// asks for a call is held until the call's journal entry is started, and
// both go together, with the events queued so far; the tool message goes
// with its call's journal outcome and the events queued meanwhile. A
// crash before the first of these writes loses only the model's answer,
// which a resumed run asks for again: no call of it had started.

// holdAssistant keeps m, an assistant message that asks for calls, to be
// written with the first of them (writeStep), and returns the number it
// will have in the conversation.
func (r *run) holdAssistant(m agent.Message) int64 {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.held = append(r.held, m)
	return r.stored + int64(len(r.held))
}

// writeStep writes msgs (after any held message), the journal outcomes
// done and the journal start of start, with the run's queued events, in
// one transaction. A failure leaves held messages held, so the run's end
// (settleOutcomes) tries them again; the events go on their own.
func (r *run) writeStep(ctx context.Context, msgs []agent.Message, done []store.CallOutcome, start *store.JournalCall) (store.StepResult, error) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	all := append(r.held[:len(r.held):len(r.held)], msgs...)
	var evs []store.EventInput
	if r.events != nil {
		evs = r.events.Take()
	}
	res, err := r.s.st.WriteStep(ctx, r.task.ID, store.Step{After: r.stored, Messages: all, Finish: done, Start: start, Events: evs})
	if r.events != nil {
		r.events.Taken(evs, err == nil)
	}
	if err != nil {
		return res, err
	}
	r.stored, r.held = res.Seq, nil
	if len(evs) > 0 {
		r.s.hub.Notify(r.task.ID)
	}
	return res, nil
}

// setStored sets how many messages the stored conversation has, when the
// run reads it.
func (r *run) setStored(n int) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.stored = int64(n)
}

// flushHeld writes a held assistant message whose calls never started (a
// refusal ended the batch, the run stopped, or it waits for an approval):
// the transcript keeps the question, and a resumed run finds its calls
// without journal entries and runs them.
func (r *run) flushHeld(ctx context.Context) {
	r.stepMu.Lock()
	n := len(r.held)
	r.stepMu.Unlock()
	if n == 0 {
		return
	}
	if _, err := r.writeStep(ctx, nil, nil, nil); err != nil {
		r.s.log.Error("runner: saving a message failed", "task", r.task.ID, "err", err)
	}
}

// errNotRun is why a call was not run: the run was stopped first.
var errNotRun = errors.New("not run: the run was stopped before this call")

// errNotJournaled is why a call was not run: its journal entry could not
// be written.
var errNotJournaled = errors.New("the call was not run: it could not be recorded in the task's journal")
