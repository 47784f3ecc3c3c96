package runner

import (
	"context"
	"fmt"

	"reasonix/runner/internal/taskrun"
	"reasonix/runner/store"
)

// spent is task id's spend over all its runs, from its usage events
// (taskrun.Spend).
func (s *Service) spent(ctx context.Context, id string) (store.Result, error) {
	if r := s.runFor(id); r != nil {
		r.FlushEvents() // its latest calls may still be queued
	}
	evs, err := s.st.EventsOfType(ctx, id, "usage")
	if err != nil {
		return store.Result{}, fmt.Errorf("runner: read the spend of task %s: %w", id, err)
	}
	return taskrun.Spend(id, evs)
}

// keptSpend is the spend to keep in a result written without a run (a
// cancel, an interruption): the task's spend, or, when it cannot be read,
// what its result says so far — never less than was recorded.
func (s *Service) keptSpend(ctx context.Context, id string, prev *store.Result) store.Result {
	res, err := s.spent(ctx, id)
	if err == nil {
		return res
	}
	s.log.Error("runner: the task's spend could not be read; its result keeps the last recorded one", "task", id, "err", err)
	if prev == nil {
		return store.Result{CostComplete: true}
	}
	return store.Result{Tokens: prev.Tokens, Cost: prev.Cost, CostComplete: prev.CostComplete,
		UnpricedTokens: prev.UnpricedTokens, Models: prev.Models}
}
