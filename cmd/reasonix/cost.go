package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// errCostBudget is the cancel cause of a run stopped by --max-cost.
var errCostBudget = errors.New("the run's cost budget is spent")

// costBudgetError is errCostBudget in the words of the budget that was spent.
type costBudgetError string

func (e costBudgetError) Error() string { return string(e) }
func (e costBudgetError) Unwrap() error { return errCostBudget }

// costMeter prices a run's model calls, each with its own model's prices
// (a sub-agent may run on another model), and stops the run once they
// cost --max-cost.
type costMeter struct {
	tally *session.Tally
	limit float64 // USD; 0 = no limit
	stop  context.CancelCauseFunc
}

func newCostMeter(cfg *config.Config, limit float64, stop context.CancelCauseFunc) *costMeter {
	return &costMeter{tally: session.NewTally(session.NewPrices(cfg)), limit: limit, stop: stop}
}

func (m *costMeter) observe(e agent.Event) {
	if e.Type != agent.EventUsage || e.Usage == nil {
		return
	}
	m.tally.Add(e.Model, *e.Usage)
	if m.limit > 0 && m.tally.Cost() >= m.limit {
		m.stop(errCostBudget)
	}
}

// spent reports whether the run was stopped by its cost budget.
func (m *costMeter) spent(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCostBudget)
}

// reason says which budget stopped the run, for a person.
func (m *costMeter) reason() string {
	return fmt.Sprintf("cost budget $%s reached ($%.4f spent, --max-cost)", strconv.FormatFloat(m.limit, 'f', -1, 64), m.tally.Cost())
}

// costJSON is the cost part of the --json result (see store.Result).
type costJSON struct {
	Cost           float64                    `json:"cost"`
	CostComplete   bool                       `json:"cost_complete"`
	UnpricedTokens int                        `json:"unpriced_tokens,omitempty"`
	Models         map[string]store.ModelCost `json:"models,omitempty"`
}

func (m *costMeter) json() costJSON {
	var r store.Result
	m.tally.Fill(&r)
	return costJSON{Cost: r.Cost, CostComplete: r.CostComplete, UnpricedTokens: r.UnpricedTokens, Models: r.Models}
}

// summary is the closing cost line: the total, then each model's part.
func (m *costMeter) summary(w io.Writer) {
	c := m.json()
	if len(c.Models) == 0 {
		return
	}
	fmt.Fprintf(w, "reasonix: cost %s\n", costText(c.Cost, c.UnpricedTokens, c.Models))
}

// costText is a task's cost with its breakdown when several models ran:
// "$0.0041 + 110 unpriced tokens (fake/big $0.0029, fake/free unpriced)".
func costText(usd float64, unpriced int, models map[string]store.ModelCost) string {
	text := session.FormatCost(usd, unpriced)
	if len(models) < 2 {
		return text
	}
	parts := make([]string, 0, len(models))
	for _, name := range slices.Sorted(maps.Keys(models)) {
		mc := models[name]
		if mc.Priced {
			parts = append(parts, fmt.Sprintf("%s $%.4f", name, mc.Cost))
		} else {
			parts = append(parts, name+" unpriced")
		}
	}
	return text + " (" + strings.Join(parts, ", ") + ")"
}
