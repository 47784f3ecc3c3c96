package goals

import (
	"fmt"
	"strconv"
	"sync"

	"reasonix/agent"
)

// PriceFunc prices one model call: what usage cost on model (a reference
// as agent.ModelRef gives it), priced false for a model without prices.
type PriceFunc func(model string, u agent.Usage) (usd float64, priced bool)

// spend sums the cost of model calls; safe for concurrent use.
type spend struct {
	mu  sync.Mutex
	usd float64
}

func (s *spend) add(usd float64) {
	s.mu.Lock()
	s.usd += usd
	s.mu.Unlock()
}

func (s *spend) total() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usd
}

// price is what the usage event e cost under price (0 without one).
func priceEvent(price PriceFunc, e agent.Event) float64 {
	if price == nil || e.Type != agent.EventUsage || e.Usage == nil {
		return 0
	}
	usd, _ := price(e.Model, *e.Usage)
	return usd
}

// costBudgetSpent names a spent cost budget, "" while it lasts.
func costBudgetSpent(limit, spent float64) string {
	if limit > 0 && spent >= limit {
		return fmt.Sprintf("cost budget $%s reached ($%.4f spent)", strconv.FormatFloat(limit, 'f', -1, 64), spent)
	}
	return ""
}
