package goals

import (
	"slices"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestSliceBudgetWarnsOncePerSlice: a slice that crosses Budget.Warn of
// its turn budget emits one budget_warning (not again in the same slice,
// nor when it then reaches the limit); the warning is kept in the saved
// state, and the fresh slice a resume starts warns again, once.
func TestSliceBudgetWarnsOncePerSlice(t *testing.T) {
	var turns []agenttest.Turn
	for q := range 5 {
		turns = append(turns, calls(call(string(rune('a'+q)), "probe", map[string]any{"q": q})), say("step"))
	}
	p := agenttest.NewScriptedProvider(turns...)
	var mu sync.Mutex
	var warnings []BudgetWarning
	cfg := base(t, p)
	cfg.Observer = func(e agent.Event) {
		if e.Type == EventBudgetWarning {
			mu.Lock()
			warnings = append(warnings, e.Data.(BudgetWarning))
			mu.Unlock()
		}
	}
	store := &memStore{}
	c := newController(t, Config{Agent: cfg, Store: store, Budget: Budget{Turns: 5, Warn: 0.6}})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "count"})
	if err != nil {
		t.Fatal(err)
	}
	want := BudgetWarning{Budget: "turns", Limit: 5, Spent: 3, Share: 0.6, Scope: "goal_slice"}
	if res.Outcome != StatusBudget || len(warnings) != 1 || warnings[0] != want {
		t.Fatalf("outcome %s, warnings %+v, want one %+v", res.Outcome, warnings, want)
	}
	st := store.load(t)
	if !slices.Equal(st.Slice.Warned, []string{"turns"}) {
		t.Fatalf("saved slice = %+v", st.Slice)
	}
	for q := range 5 {
		p.Add(calls(call(string(rune('k'+q)), "probe", map[string]any{"q": 10 + q})), say("step"))
	}
	res, err = c.Resume(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBudget || res.State.Turns != 10 || len(warnings) != 2 || warnings[1] != want {
		t.Fatalf("after resume: outcome %s (%s), warnings %+v", res.Outcome, res.State.Reason, warnings)
	}
}

// TestSliceBudgetWarnsPerBudget: cost and tokens warn on their own, each
// once; without Warn nothing warns.
func TestSliceBudgetWarnsPerBudget(t *testing.T) {
	for _, warn := range []float64{0, 0.5} {
		p := agenttest.NewScriptedProvider(
			withUsage(calls(call("1", "probe", map[string]any{"q": 1})), agent.Usage{Prompt: 60}), say("step"),
			withUsage(calls(call("2", "probe", map[string]any{"q": 2})), agent.Usage{Prompt: 60}), say("step"),
		)
		var got []string
		cfg := base(t, p)
		cfg.Observer = func(e agent.Event) {
			if e.Type == EventBudgetWarning {
				got = append(got, e.Data.(BudgetWarning).Budget)
			}
		}
		price := func(_ string, u agent.Usage) (float64, bool) { return float64(u.Prompt) / 100, true }
		c := newController(t, Config{Agent: cfg, Price: price, Budget: Budget{Tokens: 100, USD: 1, Warn: warn}})
		if _, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "spend"}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := map[float64][]string{0: nil, 0.5: {"cost", "tokens"}}[warn]; !slices.Equal(got, want) {
			t.Fatalf("warn %v: warnings %v, want %v", warn, got, want)
		}
	}
}

func withUsage(t agenttest.Turn, u agent.Usage) agenttest.Turn { t.Usage = u; return t }
