package runner

import (
	"context"
	"errors"
	"strings"

	"reasonix/runner/internal/taskrun"
	"reasonix/runner/store"
)

// Cancel stops task id. A queued or waiting task becomes cancelled at once;
// a running one is interrupted at its next safe point (on this node through
// its context, on another through the store flag its worker polls) and
// becomes cancelled. A finished task is an error wrapping ErrConflict.
func (s *Service) Cancel(ctx context.Context, id string) (store.Task, error) {
	for range 3 { // the state may change under us; each round re-reads it
		t, err := s.Task(ctx, id)
		if err != nil {
			return store.Task{}, err
		}
		switch t.State {
		case store.StateQueued, store.StateWaitingApproval, store.StateWaitingCI:
			// The spend of earlier runs (a continued, resumed or waiting
			// task) stays with it.
			if t.State == store.StateWaitingApproval {
				s.closeApprovals(ctx, id)
			}
			res := s.keptSpend(ctx, id, t.Result)
			res.Error = "cancelled"
			nt, err := s.st.SetTaskState(ctx, id, []store.State{t.State}, store.StateCancelled, &store.StateOpts{Result: &res,
				Events: s.announce(id, event{"task_state", map[string]any{"state": store.StateCancelled, "reason": "cancelled"}})})
			if errors.Is(err, store.ErrStateConflict) {
				continue
			}
			if err != nil {
				return store.Task{}, mapStoreErr(err, "task "+id)
			}
			s.hub.Notify(id)
			s.finishedMetrics(nt, 0)
			// Let a parked job run once and find the task finished, rather
			// than sit in the queue until its snooze ends (which it does
			// anyway if this wake fails: the task is cancelled either way).
			if err := s.st.Wake(ctx, id); err != nil {
				s.log.Warn("runner: wake after cancel", "task", id, "err", err)
			}
			return nt, nil
		case store.StateRunning:
			if err := s.st.RequestCancel(ctx, id); err != nil {
				return store.Task{}, mapStoreErr(err, "task "+id)
			}
			if r := s.runFor(id); r != nil {
				r.Cancel(taskrun.ErrCancelled)
			}
			s.emitLogged(ctx, id, "cancel_requested", nil)
			return t, nil
		default:
			return store.Task{}, failf(ErrConflict, "task %s %s", id, stateWords(t.State))
		}
	}
	return store.Task{}, failf(ErrConflict, "task %s keeps changing state; try again", id)
}

// closeApprovals expires the pending approvals of task id, which is being
// cancelled, before its last state: their messages say so, and one
// without a deadline is not left waiting (and reminded of) for ever.
func (s *Service) closeApprovals(ctx context.Context, id string) {
	closed, err := s.st.ExpireTaskApprovals(ctx, id, "task cancelled")
	if err != nil {
		s.log.Warn("runner: closing a cancelled task's approvals", "task", id, "err", err)
		return
	}
	for _, a := range closed {
		s.approvalExpired(ctx, a)
	}
}

// Message delivers text from p to task id. A live task (queued, running,
// waiting) takes it before its next model request — steering it; a
// running task on another node picks it up within ControlInterval. A
// finished or interrupted task is continued: it is queued again and the
// message follows the existing conversation. It returns the task as it is
// after the message.
//
// Only a principal who may control the task (MayControl: its requester or
// an admin) may message it — every door (API, CLI, dashboard, chat
// replies) comes through here; anyone else gets an *Error of kind
// ErrForbidden and the task is untouched. The message is stored under p,
// which makes p an instructor of the calls the task asks for after reading
// it: p may not approve them (see MayDecide).
func (s *Service) Message(ctx context.Context, id string, p Principal, text string) (store.Task, error) {
	return s.message(ctx, id, p, text, "")
}

// MessageOnce is Message under an idempotency key (e.g. the chat delivery
// the message came in), for a caller that may deliver the same message
// again after a crash: the message reaches the task once. A repeat still
// continues a finished task whose message no run has taken yet (the first
// delivery stopped between posting and continuing), and does nothing
// more once one has.
func (s *Service) MessageOnce(ctx context.Context, id string, p Principal, text, key string) (store.Task, error) {
	if strings.TrimSpace(key) == "" {
		return store.Task{}, invalidf("the message's idempotency key is empty")
	}
	return s.message(ctx, id, p, text, key)
}

func (s *Service) message(ctx context.Context, id string, p Principal, text, key string) (store.Task, error) {
	if strings.TrimSpace(text) == "" {
		return store.Task{}, invalidf("the message is empty")
	}
	if len(text) > MaxPromptBytes {
		return store.Task{}, invalidf("the message is %d bytes; at most %d are accepted", len(text), MaxPromptBytes)
	}
	if s.stopping.Load() {
		return store.Task{}, failf(ErrUnavailable, "the service is shutting down; try again shortly")
	}
	t, err := s.Task(ctx, id)
	if err != nil {
		return store.Task{}, err
	}
	if err := p.MayControl(t); err != nil {
		return store.Task{}, err
	}
	return s.deliver(ctx, t, p.ID, text, key, event{"message", map[string]any{"role": "user", "requester": p.ID, "text": text}})
}

// deliver posts text from requester to task t (under key when it is not
// empty) and announces it with ev, then steers the live task or continues
// a finished one. The caller has decided that requester may instruct t.
func (s *Service) deliver(ctx context.Context, t store.Task, requester, text, key string, ev event) (store.Task, error) {
	id := t.ID
	if t.State == store.StateCancelled {
		return store.Task{}, failf(ErrConflict, "task %s was cancelled", id)
	}
	var (
		err    error
		m      store.InboxMessage
		posted = true
	)
	if key == "" {
		_, err = s.st.PostMessage(ctx, id, requester, text)
	} else {
		m, posted, err = s.st.PostMessageOnce(ctx, id, requester, text, key)
	}
	if err != nil {
		return store.Task{}, mapStoreErr(err, "task "+id)
	}
	if posted {
		s.emitLogged(ctx, id, ev.typ, ev.payload)
	}
	// Read the state again after posting: a run that ends after this read
	// finds the message in its final inbox check, one that ended before it
	// is continued here, so the message is never left unread.
	if t, err = s.Task(ctx, id); err != nil {
		return store.Task{}, err
	}
	// A task waiting for CI is continued like a finished one: the message
	// is new work, and its run publishes and waits again.
	if !t.State.Terminal() && t.State != store.StateWaitingCI {
		if r := s.runFor(id); r != nil {
			r.Poke()
		}
		return t, nil
	}
	if t.State == store.StateCancelled {
		return t, nil
	}
	if !m.TakenAt.IsZero() {
		return t, nil // a repeat: a run took the message and has ended since
	}
	s.prepareRebase(ctx, t) // a pull request that conflicts with its base is continued to rebase
	nt, err := s.st.Requeue(ctx, id, []store.State{t.State},
		s.announce(id, event{"task_state", map[string]any{"state": store.StateQueued, "reason": "continued"}})...)
	if err != nil {
		// Lost a race with a worker that will read the inbox itself.
		if errors.Is(err, store.ErrStateConflict) {
			return s.Task(ctx, id)
		}
		return store.Task{}, mapStoreErr(err, "task "+id)
	}
	s.hub.Notify(id)
	return nt, nil
}

// Resume queues an interrupted task again; its next run rebuilds the
// session from the store and continues where it stopped (see the journal
// rules in the package doc). A task that spent a budget (budget_exhausted)
// resumes too, with a fresh budget: a goal gets a fresh slice, and every
// run counts the task's token and cost budgets afresh. Any other state is
// an error wrapping ErrConflict.
func (s *Service) Resume(ctx context.Context, id string) (store.Task, error) {
	if s.stopping.Load() {
		return store.Task{}, failf(ErrUnavailable, "the service is shutting down; try again shortly")
	}
	if _, err := s.Task(ctx, id); err != nil {
		return store.Task{}, err
	}
	nt, err := s.st.Requeue(ctx, id, []store.State{store.StateInterrupted, store.StateBudgetExhausted},
		s.announce(id, event{"task_state", map[string]any{"state": store.StateQueued, "reason": "resumed"}})...)
	if err != nil {
		var se *store.StateError
		if errors.As(err, &se) {
			return store.Task{}, failf(ErrConflict, "task %s %s; only interrupted tasks and tasks out of budget resume", id, stateWords(se.Current))
		}
		return store.Task{}, mapStoreErr(err, "task "+id)
	}
	s.hub.Notify(id)
	return nt, nil
}
