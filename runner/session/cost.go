package session

import (
	"fmt"
	"maps"
	"sync"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner/store"
)

// Prices prices model calls, each with its own model's `prices` entry
// (USD per million input, cached input and output tokens). A model without
// one is unpriced: its calls are counted apart, never as free. It is safe
// for concurrent use.
type Prices struct {
	set   *config.Config
	known sync.Map // model reference → price
}

type price struct {
	config.Price
	priced bool
}

// NewPrices prices with the providers of set.
func NewPrices(set *config.Config) *Prices { return &Prices{set: set} }

// Cost is what usage cost on model (a reference as agent.ModelRef gives
// it); priced is false when the model has no prices.
func (p *Prices) Cost(model string, u agent.Usage) (usd float64, priced bool) {
	pr := p.lookup(model)
	if !pr.priced {
		return 0, false
	}
	// Cached tokens are part of the prompt; a price list without a cached
	// rate charges them as input.
	cachedRate := pr.CachedInput
	if cachedRate == 0 {
		cachedRate = pr.Input
	}
	cached := min(max(u.Cached, 0), max(u.Prompt, 0))
	uncached := max(u.Prompt, 0) - cached
	return (float64(uncached)*pr.Input + float64(cached)*cachedRate + float64(max(u.Completion, 0))*pr.Output) / 1e6, true
}

// lookup resolves a model reference once; the configuration does not
// change under a session, so the answer is kept.
func (p *Prices) lookup(model string) price {
	if v, ok := p.known.Load(model); ok {
		return v.(price)
	}
	var pr price
	if p != nil && p.set != nil && model != "" {
		if ref, err := p.set.ResolveModel(model); err == nil {
			pr = price{Price: ref.Price, priced: ref.Priced}
		}
	}
	p.known.Store(model, pr)
	return pr
}

// Tally sums a task's model calls by model: tokens, cost, and the tokens
// no price covers. It is safe for concurrent use (sub-agents report at
// the same time as their parent).
type Tally struct {
	prices *Prices
	mu     sync.Mutex
	models map[string]store.ModelCost
	usd    float64
}

// NewTally starts an empty tally priced by prices.
func NewTally(prices *Prices) *Tally {
	return &Tally{prices: prices, models: map[string]store.ModelCost{}}
}

// Add counts one call's usage on model and returns what it cost.
func (t *Tally) Add(model string, u agent.Usage) (usd float64, priced bool) {
	usd, priced = t.prices.Cost(model, u)
	t.Record(model, u, usd, priced)
	return usd, priced
}

// Record counts one call already priced (usd, or unpriced): a call read
// back from the task's usage events keeps the price it was made at.
func (t *Tally) Record(model string, u agent.Usage, usd float64, priced bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.models[model]
	m.Calls++
	m.Tokens = m.Tokens.Add(u)
	m.Cost += usd
	m.Priced = priced
	t.models[model] = m
	t.usd += usd
}

// Cost is the USD of the priced calls so far.
func (t *Tally) Cost() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usd
}

// Fill writes the tally into a task result: the cost, whether it is
// complete, the unpriced tokens and the breakdown by model.
func (t *Tally) Fill(r *store.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Cost, r.UnpricedTokens = t.usd, 0
	for _, m := range t.models {
		if !m.Priced {
			r.UnpricedTokens += m.Tokens.Prompt + m.Tokens.Completion
		}
	}
	r.CostComplete = r.UnpricedTokens == 0
	r.Models = nil
	if len(t.models) > 0 {
		r.Models = maps.Clone(t.models)
	}
}

// FormatCost says what a task cost for a person: "$0.0123"; "unpriced"
// when no call was priced; "$0.0123 + 4000 unpriced tokens" when only some
// were. Never "$0.00" for calls nobody priced.
func FormatCost(usd float64, unpricedTokens int) string {
	switch {
	case unpricedTokens == 0:
		return fmt.Sprintf("$%.4f", usd)
	case usd == 0:
		return fmt.Sprintf("unpriced (%d tokens)", unpricedTokens)
	}
	return fmt.Sprintf("$%.4f + %d unpriced tokens", usd, unpricedTokens)
}
