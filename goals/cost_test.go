package goals

import (
	"math"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestCostBudget: each call is priced by the model the usage event names;
// the slice stops once it cost Budget.USD, the reason names the budget,
// and a resume starts a fresh slice while the goal's cost keeps adding up.
func TestCostBudget(t *testing.T) {
	used := agent.Usage{Prompt: 50, Completion: 10}
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("1", "probe", map[string]any{"q": 1})}, Usage: used}, agenttest.Turn{Text: "a", Usage: used},
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("2", "probe", map[string]any{"q": 2})}, Usage: used}, agenttest.Turn{Text: "b", Usage: used},
	)
	var models []string
	price := func(model string, u agent.Usage) (float64, bool) {
		models = append(models, model)
		return float64(u.Prompt+u.Completion) / 100, true // $0.60 a call
	}
	store := &memStore{}
	c := newController(t, Config{Agent: base(t, p), Store: store, Price: price, Budget: Budget{USD: 2}})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "spend"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBudget || math.Abs(res.State.Cost-2.4) > 1e-9 || !strings.Contains(res.Reason, "cost budget $2 reached") {
		t.Fatalf("outcome %s cost %v reason %q", res.Outcome, res.State.Cost, res.Reason)
	}
	if len(models) != 4 || models[0] != "scripted" {
		t.Fatalf("priced models = %q", models)
	}
	st := store.load(t)
	p.Add(calls(complete("3", st.Revision+1)), say("done"))
	if res, err = c.Resume(t.Context(), st, ""); err != nil {
		t.Fatal(err)
	}
	// The two calls of the completing turn carry no usage: nothing more is spent.
	if res.Outcome != StatusComplete || res.State.Slice.Cost != 0 || math.Abs(res.State.Cost-2.4) > 1e-9 {
		t.Fatalf("after resume: %s, cost %v, slice %+v", res.Outcome, res.State.Cost, res.State.Slice)
	}
}

func TestNegativeCostBudgetIsRefused(t *testing.T) {
	if _, err := New(Config{Agent: base(t, agenttest.NewScriptedProvider()), Budget: Budget{USD: -1}}); err == nil {
		t.Fatal("a negative cost budget was accepted")
	}
	if _, err := New(Config{Agent: base(t, agenttest.NewScriptedProvider()), Budget: Budget{USD: math.NaN()}}); err == nil {
		t.Fatal("a NaN cost budget was accepted")
	}
}
