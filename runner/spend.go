package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"reasonix/agent"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// A task's spend is the sum of its "usage" events: every model call's
// event is written as the call returns (it is the write that already
// happens per call; the run's event queue sends it moments later, so a node
// killed outright loses at most the calls of that last moment), so a run
// that dies without recording its end — a node killed mid-run, whose task
// another node takes over — still counts, and so does every run before it.
// Whoever records a result folds the events again; nothing adds up runs in
// memory.

// usagePayload is the part of a usage event (see addUsage) that is spend.
type usagePayload struct {
	Model      string   `json:"model"`
	Prompt     int      `json:"prompt"`
	Completion int      `json:"completion"`
	Cached     int      `json:"cached"`
	Cost       *float64 `json:"cost"` // null: the model has no prices
}

// spent is task id's spend over all its runs: tokens, cost, whether it is
// complete, the unpriced tokens and the breakdown by model. Only those
// fields of the result are set.
func (s *Service) spent(ctx context.Context, id string) (store.Result, error) {
	if r := s.runFor(id); r != nil && r.events != nil {
		r.events.Flush() // its latest calls may still be queued
	}
	evs, err := s.st.EventsOfType(ctx, id, "usage")
	if err != nil {
		return store.Result{}, fmt.Errorf("runner: read the spend of task %s: %w", id, err)
	}
	tally := session.NewTally(nil)
	var res store.Result
	for _, e := range evs {
		var p usagePayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return store.Result{}, fmt.Errorf("runner: usage event %d of task %s: %w", e.Seq, id, err)
		}
		u := agent.Usage{Prompt: p.Prompt, Completion: p.Completion, Cached: p.Cached}
		res.Tokens = res.Tokens.Add(u)
		var usd float64
		if p.Cost != nil {
			usd = *p.Cost
		}
		tally.Record(p.Model, u, usd, p.Cost != nil)
	}
	tally.Fill(&res)
	return res, nil
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
