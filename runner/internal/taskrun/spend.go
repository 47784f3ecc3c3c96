package taskrun

import (
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

// Spend folds evs, the usage events of task id, into its spend: tokens,
// cost, whether it is complete, the unpriced tokens and the breakdown by
// model. Only those fields of the result are set.
func Spend(id string, evs []store.Event) (store.Result, error) {
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
