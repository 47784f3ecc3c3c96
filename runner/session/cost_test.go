package session_test

import (
	"math"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

func pricedConfig() *config.Config {
	set := config.Default()
	set.Providers = []config.Provider{
		{Name: "a", Models: []string{"m1", "m2", "m3"}, Prices: map[string]config.Price{
			"m1": {Input: 2, Output: 8, CachedInput: 0.5},
			"m2": {Input: 1, Output: 4}, // no cached rate: cached tokens cost input
		}},
		{Name: "b", Model: "m1", Prices: map[string]config.Price{"m1": {Input: 10, Output: 10, CachedInput: 10}}},
	}
	return set
}

func TestPricesEachModelWithItsOwnPrices(t *testing.T) {
	p := session.NewPrices(pricedConfig())
	u := agent.Usage{Prompt: 1000, Completion: 100, Cached: 600}
	for _, tc := range []struct {
		model  string
		usd    float64
		priced bool
	}{
		{"a/m1", (400*2 + 600*0.5 + 100*8) / 1e6, true},
		{"a/m2", (1000*1 + 100*4) / 1e6, true},
		{"b/m1", (1100 * 10) / 1e6, true}, // the same model ID under another provider has that provider's prices
		{"b", (1100 * 10) / 1e6, true},    // a provider name alone is its default model
		{"a/m3", 0, false},                // declared without prices: unpriced, not free
		{"nobody/x", 0, false},
		{"", 0, false},
	} {
		usd, priced := p.Cost(tc.model, u)
		if priced != tc.priced || math.Abs(usd-tc.usd) > 1e-15 {
			t.Errorf("Cost(%q) = %v, %v; want %v, %v", tc.model, usd, priced, tc.usd, tc.priced)
		}
	}
	// A provider that reports more cached tokens than prompt tokens is not
	// allowed to make the cost negative.
	if usd, _ := p.Cost("a/m1", agent.Usage{Prompt: 10, Cached: 50}); usd < 0 || math.Abs(usd-10*0.5/1e6) > 1e-15 {
		t.Errorf("cached > prompt costs %v", usd)
	}
}

func TestTallySumsByModelConcurrently(t *testing.T) {
	tally := session.NewTally(session.NewPrices(pricedConfig()))
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(2)
		go func() { defer wg.Done(); tally.Add("a/m2", agent.Usage{Prompt: 1000, Completion: 100}) }()
		go func() { defer wg.Done(); tally.Add("a/m3", agent.Usage{Prompt: 10, Completion: 1}) }()
	}
	wg.Wait()
	var r store.Result
	tally.Fill(&r)
	if math.Abs(r.Cost-50*0.0014) > 1e-12 || r.CostComplete || r.UnpricedTokens != 550 {
		t.Fatalf("result = %+v", r)
	}
	if m := r.Models["a/m2"]; m.Calls != 50 || !m.Priced || m.Tokens.Prompt != 50000 {
		t.Fatalf("a/m2 = %+v", m)
	}
	if m := r.Models["a/m3"]; m.Calls != 50 || m.Priced || m.Cost != 0 {
		t.Fatalf("a/m3 = %+v", m)
	}
	if math.Abs(tally.Cost()-r.Cost) > 1e-15 {
		t.Fatalf("Cost() = %v, Fill %v", tally.Cost(), r.Cost)
	}
}

func TestFormatCostNeverShowsUnpricedAsZero(t *testing.T) {
	for _, tc := range []struct {
		usd      float64
		unpriced int
		want     string
	}{
		{0.01234, 0, "$0.0123"},
		{0, 0, "$0.0000"}, // every call priced (or none made): a real zero
		{0, 4000, "unpriced (4000 tokens)"},
		{0.5, 4000, "$0.5000 + 4000 unpriced tokens"},
	} {
		if got := session.FormatCost(tc.usd, tc.unpriced); got != tc.want {
			t.Errorf("FormatCost(%v, %d) = %q, want %q", tc.usd, tc.unpriced, got, tc.want)
		}
	}
}

// BenchmarkTallyAdd is what pricing adds to one model step: resolving the
// model's prices (cached after the first call) and adding to the tally.
func BenchmarkTallyAdd(b *testing.B) {
	tally := session.NewTally(session.NewPrices(pricedConfig()))
	u := agent.Usage{Prompt: 1000, Completion: 100, Cached: 600}
	for b.Loop() {
		tally.Add("a/m1", u)
	}
}
