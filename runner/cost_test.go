package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// named gives a test provider the instance name a configured provider has,
// so its calls are priced by that provider's prices.
type named struct {
	agent.Provider
	name string
}

func (n named) Name() string { return n.name }

// pricedSettings declares provider "fake" with three models: big and small
// have prices, free has none.
func pricedSettings() *config.Config {
	set := settings(2)
	set.DefaultModel = "fake/big"
	set.Providers = []config.Provider{{Name: "fake", Kind: "openai", Models: []string{"big", "small", "free"},
		Prices: map[string]config.Price{
			"big":   {Input: 2, Output: 10, CachedInput: 1},
			"small": {Input: 0.5, Output: 1},
		}}}
	return set
}

// pricedModels resolves model references the way the service does, every
// model answered by p under the provider name "fake".
func pricedModels(p agent.Provider) func(*runner.Config) {
	return func(c *runner.Config) {
		c.Providers = func(ref string) (session.Model, error) {
			model, err := c.Settings.ResolveModel(ref)
			if err != nil {
				return session.Model{}, err
			}
			return session.Model{Provider: named{p, "fake"}, Name: model.Model}, nil
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func withUsage(t agenttest.Turn, u agent.Usage) agenttest.Turn { t.Usage = u; return t }

// TestCostMixedModels: a goal on the priced model "big" runs a fleet with
// one child on the cheaper "small" and one on the unpriced "free". Each
// call is priced with its own model's prices: the result has the sum and
// the breakdown by model, says the cost is incomplete, and the events and
// the metric agree.
func TestCostMixedModels(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	fleet := map[string]any{"items": []map[string]any{
		{"id": "a", "prompt": "child A: cheap look", "model": "fake/small"},
		{"id": "b", "prompt": "child B: free look", "model": "fake/free"},
	}}
	rt.script("Objective: look around",
		append([]agenttest.Turn{withUsage(calls(call("f1", "fleet", fleet)), agent.Usage{Prompt: 1000, Completion: 100, Cached: 400})},
			endGoal("complete", map[string]any{"summary": "Looked."}, "Done.", nil)...)...)
	rt.script("child A: cheap look", withUsage(answer("A looked"), agent.Usage{Prompt: 2000, Completion: 200}))
	rt.script("child B: free look", answer("B looked"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: pricedSettings(), Configure: pricedModels(rt)})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "look around", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	// big: (600×2 + 400×1 + 100×10)/1e6 for the fleet turn, (100×2 + 10×10)/1e6 for the answer;
	// small: (2000×0.5 + 200×1)/1e6; free: 110 unpriced tokens.
	bigCost, smallCost := 0.0026+0.0003, 0.0012
	res := done.Result
	if !near(res.Cost, bigCost+smallCost) || res.CostComplete || res.UnpricedTokens != 110 {
		t.Fatalf("cost %v complete %v unpriced %d, want %v, false, 110", res.Cost, res.CostComplete, res.UnpricedTokens, bigCost+smallCost)
	}
	big, small, free := res.Models["fake/big"], res.Models["fake/small"], res.Models["fake/free"]
	if !big.Priced || !near(big.Cost, bigCost) || big.Calls != 2 || big.Tokens.Cached != 400 ||
		!small.Priced || !near(small.Cost, smallCost) || small.Tokens.Prompt != 2000 ||
		free.Priced || free.Cost != 0 || free.Tokens.Prompt != 100 {
		t.Fatalf("by model = %+v", res.Models)
	}
	rep := finalReport(t, svc, task.ID)
	if c, _ := rep["cost"].(float64); !near(c, bigCost+smallCost) || rep["cost_complete"] != false || rep["unpriced_tokens"] != float64(110) {
		t.Fatalf("final report = %v", rep)
	}
	if goal, _ := rep["goal"].(map[string]any); !near(goal["cost"].(float64), bigCost+smallCost) {
		t.Fatalf("goal in the final report = %v", goal)
	}
	// Each usage event names its model and its cost; the unpriced one has none.
	var sawFree, sawSmall bool
	for _, e := range runnertest.Events(t, svc, task.ID, "usage") {
		p := payload(t, e)
		switch p["model"] {
		case "fake/free":
			sawFree = p["cost"] == nil && p["subagent"] != nil
		case "fake/small":
			sawSmall = near(p["cost"].(float64), smallCost)
		}
	}
	if !sawFree || !sawSmall {
		t.Fatal("the sub-agents' usage events lack their model or cost")
	}
	// Per fleet node: the finished child reports its own cost.
	var nodeCost float64
	for _, e := range runnertest.Events(t, svc, task.ID, "subagent_finished") {
		if p := payload(t, e); p["id"] == "a" {
			nodeCost, _ = p["cost"].(float64)
		}
	}
	if !near(nodeCost, smallCost) {
		t.Fatalf("child a's cost = %v, want %v", nodeCost, smallCost)
	}
	// Per goal turn: the turns' costs add up to the goal's.
	var turns, last float64
	for _, e := range runnertest.Events(t, svc, task.ID, "goal_updated") {
		p := payload(t, e)
		turns += p["turn_cost"].(float64)
		last = p["cost"].(float64)
	}
	if !near(turns, bigCost+smallCost) || !near(last, bigCost+smallCost) {
		t.Fatalf("goal turn costs add to %v, goal cost %v", turns, last)
	}
	metrics := scrape(t, svc)
	for model, want := range map[string]float64{"fake/big": bigCost, "fake/small": smallCost} {
		line := fmt.Sprintf(`reasonix_cost_usd_total{model=%q} `, model)
		var got float64
		if i := strings.Index(metrics, line); i < 0 {
			t.Fatalf("no %s in the metrics", line)
		} else {
			fmt.Sscan(metrics[i+len(line):], &got)
		}
		if !near(got, want) {
			t.Errorf("%s%v, want %v", line, got, want)
		}
	}
	if strings.Contains(metrics, `reasonix_cost_usd_total{model="fake/free"}`) ||
		!strings.Contains(metrics, `reasonix_unpriced_tokens_total{model="fake/free"} 110`) {
		t.Error("the unpriced model is counted as cost, or its tokens are missing")
	}
}

func scrape(t *testing.T, svc *runner.Service) string {
	t.Helper()
	rec := httptest.NewRecorder()
	svc.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCostPricedAndUnpriced: a plain task on a priced model has a complete
// cost; the same task on a model without prices says so instead of $0.
func TestCostPricedAndUnpriced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model    string
		cost     float64
		complete bool
		unpriced int
	}{
		{"fake/big", (1000*2 + 400*1 + 100*10 + 100*2 + 10*10) / 1e6, true, 0},
		{"fake/free", 0, false, 1610},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			rt := newRouter()
			rt.script("write it",
				withUsage(calls(call("c1", "write_file", map[string]string{"path": "a.txt", "content": "a"})), agent.Usage{Prompt: 1400, Completion: 100, Cached: 400}),
				answer("written"))
			set := pricedSettings()
			set.DefaultModel = tc.model
			svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
			task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: "write it", Posture: "auto"})
			if err != nil {
				t.Fatal(err)
			}
			done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
			res := done.Result
			if done.State != store.StateSucceeded || !near(res.Cost, tc.cost) || res.CostComplete != tc.complete || res.UnpricedTokens != tc.unpriced {
				t.Fatalf("task = %s cost %v complete %v unpriced %d", done.State, res.Cost, res.CostComplete, res.UnpricedTokens)
			}
			if got := session.FormatCost(res.Cost, res.UnpricedTokens); tc.complete == strings.Contains(got, "unpriced") {
				t.Fatalf("shown as %q", got)
			}
		})
	}
}

// TestCostBudgetStopsAndResumes: [runner] max_cost_per_task stops a goal
// in the middle of a turn as budget_exhausted with the budget in its
// reason; resuming it grants a fresh budget and the goal completes.
func TestCostBudgetStopsAndResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: two steps",
		withUsage(calls(call("w1", "write_file", map[string]string{"path": "one.txt", "content": "1\n"})), agent.Usage{Prompt: 1000, Completion: 100}),
		answer("Step one is done.")) // the resumed run's first answer
	set := pricedSettings()
	set.Runner.MaxCostPerTask = 0.0025 // the first call costs $0.003
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "two steps", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "cost_budget" ||
		!contains(done.Result.Reason, "cost budget $0.0025 reached") || !near(done.Result.Cost, 0.003) {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if exit := session.ExitCode(done.State); exit != session.ExitBudget {
		t.Fatalf("exit code %d", exit)
	}
	p.Add(endGoal("complete", map[string]any{"summary": "Both steps done."}, "Done.", nil)...)
	if _, err := svc.Resume(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	done = runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.Summary != "Both steps done." {
		t.Fatalf("after Resume: %s %+v", done.State, done.Result)
	}
	// The task's cost is over both runs: the stopped call, then the
	// continued turn's answer and the final one.
	if big := done.Result.Models["fake/big"]; !near(done.Result.Cost, 0.003+0.0003+0.0003) || big.Calls != 3 || done.Result.Tokens.Prompt != 1200 {
		t.Fatalf("cost over both runs = %v, %+v, tokens %+v", done.Result.Cost, done.Result.Models, done.Result.Tokens)
	}
}

// TestGoalCostBudgetResumes: a goal's budget_usd (the task's own, in
// place of [agent] goal_budget_usd) ends it between turns once its slice
// cost that much; Resume grants a fresh slice.
func TestGoalCostBudgetResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: two steps",
		withUsage(calls(call("w1", "write_file", map[string]string{"path": "one.txt", "content": "1\n"})), agent.Usage{Prompt: 1000, Completion: 100}),
		answer("Step one is done."))
	set := pricedSettings()
	set.Agent.GoalBudgetUSD = 100 // the task's own budget wins
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set, Configure: pricedModels(rt)})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "two steps", Goal: true, Posture: "auto", BudgetUSD: 0.003})
	if task.BudgetUSD != 0.003 {
		t.Fatalf("task budget = %v", task.BudgetUSD)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "goal_budget" || !contains(done.Result.Reason, "cost budget $0.003 reached") {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	p.Add(endGoal("complete", map[string]any{"summary": "Both steps done."}, "Done.", nil)...)
	if _, err := svc.Resume(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	done = runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("after Resume: %s %+v", done.State, done.Result)
	}
	goal, _ := finalReport(t, svc, task.ID)["goal"].(map[string]any)
	if c, _ := goal["cost"].(float64); !near(c, 0.003+0.0003+0.0003) {
		t.Fatalf("goal cost over both slices = %v", goal["cost"])
	}
}

// TestBudgetUSDValidation: only a goal takes budget_usd, and only a
// non-negative amount; nothing is written for a refused request.
func TestBudgetUSDValidation(t *testing.T) {
	t.Parallel()
	svc := runnertest.Start(t, runnertest.Options{})
	for _, req := range []runner.TaskRequest{
		{Prompt: "plain", BudgetUSD: 1},
		{Prompt: "goal", Goal: true, BudgetUSD: -1},
		{Prompt: "goal", Goal: true, BudgetUSD: math.NaN()},
		{Prompt: "goal", Goal: true, BudgetUSD: math.Inf(1)},
	} {
		req.Source = store.SourceAPI
		if _, _, err := svc.Submit(context.Background(), req); !errors.Is(err, runner.ErrInvalid) {
			t.Errorf("Submit(%+v) = %v, want ErrInvalid", req, err)
		}
	}
}
