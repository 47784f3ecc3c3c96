package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// pricedConfig is the fake provider with two models and their prices
// (USD per million tokens), followed by extra TOML.
func (e *e2e) pricedConfig(extra string) {
	e.writeUserConfig(fmt.Sprintf(`
default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = ["fake-model", "cheap-model"]
api_key_env = "FAKE_API_KEY"
max_retries = 2
prices = { "fake-model" = { input = 1.0, output = 2.0, cached_input = 0.5 }, "cheap-model" = { input = 0.1, output = 0.2 } }
%s`, e.srv.URL, extra))
}

func nearly(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// costResult is the cost part of run --json.
type costResult struct {
	Status         string `json:"status"`
	Outcome        string `json:"outcome"`
	Error          string `json:"error"`
	Cost           float64
	CostComplete   bool `json:"cost_complete"`
	UnpricedTokens int  `json:"unpriced_tokens"`
	Models         map[string]struct {
		Calls  int
		Cost   float64
		Priced bool
		Tokens agent.Usage
	}
}

// A toolTurn costs (20×1 + 80×0.5 + 10×2)/1e6 on fake-model: the second
// call passes a $0.0001 budget, so the run ends budget_exhausted, exit 4.
func TestRunMaxCostExitsFour(t *testing.T) {
	e := newE2E(t, goalScript(10, func(req agenttest.Request) agenttest.Turn {
		return toolTurn(call(fmt.Sprint(len(req.Messages)), "ls", `{}`))
	})...)
	e.pricedConfig("")
	stdout, stderr, code := e.run("run", "--json", "--max-cost", "0.0001", "list forever")
	if code != exitBudget {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res costResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Status != "budget_exhausted" || res.Outcome != "cost_budget" || !strings.Contains(res.Error, "cost budget $0.0001 reached") ||
		!nearly(res.Cost, 0.00016) || !res.CostComplete {
		t.Fatalf("result = %+v", res)
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (the budget stops the run)", n)
	}
	if !strings.Contains(stderr, "reasonix: cost $0.0002") {
		t.Errorf("stderr lacks the cost:\n%s", stderr)
	}
	_, stderr, code = e.run("run", "--max-cost", "-1", "x")
	if code != exitUsage || !strings.Contains(stderr, "--max-cost") {
		t.Errorf("negative --max-cost: exit %d %s", code, stderr)
	}
}

// A goal stopped by --max-cost ends budget_exhausted (exit 4) with the
// budget as its reason, not as an interruption.
func TestRunGoalMaxCostExitsFour(t *testing.T) {
	e := newE2E(t, goalScript(10, func(req agenttest.Request) agenttest.Turn {
		return toolTurn(call(fmt.Sprint(len(req.Messages)), "ls", `{}`))
	})...)
	e.pricedConfig("")
	stdout, stderr, code := e.run("run", "--goal", "--json", "--max-cost", "0.0001", "an endless goal")
	if code != exitBudget {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res struct {
		costResult
		Reason string
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Status != "budget_exhausted" || res.Outcome != "budget_exhausted" || !strings.Contains(res.Reason, "cost budget $0.0001 reached") || !nearly(res.Cost, 0.00016) {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(stderr, "reasonix: reason: cost budget $0.0001 reached") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// A model without prices is unpriced, never $0.
func TestRunUnpricedCost(t *testing.T) {
	e := newE2E(t, answer("hello"))
	stdout, stderr, code := e.run("run", "--json", "say hello")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res costResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Cost != 0 || res.CostComplete || res.UnpricedTokens != 140 || res.Models["fake/fake-model"].Priced {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(stderr, "reasonix: cost unpriced (140 tokens)") || strings.Contains(stderr, "$0.0000") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// A goal on fake-model delegates to a sub-agent on cheap-model: each call
// is priced with its own model's prices and the sum is right per model.
func TestRunGoalMixedModelCost(t *testing.T) {
	var childModel atomic.Value
	e := newE2E(t, goalScript(12, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[0].Content, "sub-agent") {
			childModel.Store(req.Model)
			return answer("cheap child answered")
		}
		switch res := lastToolResult(req); {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("fleet done")
		case strings.Contains(res, "cheap child answered"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"the child answered"}`, id, rev)))
		default:
			return toolTurn(call("g1", "task", `{"prompt":"look cheaply","model":"fake/cheap-model"}`))
		}
	})...)
	e.pricedConfig("")
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "delegate cheaply")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if childModel.Load() != "cheap-model" {
		t.Fatalf("the sub-agent asked for model %v", childModel.Load())
	}
	var res costResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	// Parent: two tool turns (0.00008 each) and an answer (120×1 + 20×2)/1e6;
	// child: (120×0.1 + 20×0.2)/1e6.
	parent, child := 0.00008*2+0.00016, 0.000016
	big, cheap := res.Models["fake/fake-model"], res.Models["fake/cheap-model"]
	if !nearly(res.Cost, parent+child) || !res.CostComplete || !nearly(big.Cost, parent) || big.Calls != 3 ||
		!nearly(cheap.Cost, child) || cheap.Calls != 1 || !cheap.Priced {
		t.Fatalf("cost = %+v", res)
	}
	if !strings.Contains(stderr, "reasonix: cost $0.0003 (fake/cheap-model $0.0000, fake/fake-model $0.0003)") {
		t.Errorf("stderr lacks the cost by model:\n%s", stderr)
	}
}

// The service: [runner] max_cost_per_task stops a goal mid-way as
// budget_exhausted; tasks show says what it cost and why it stopped, and
// tasks resume continues it with a fresh budget to completion.
func TestServeCostBudgetStopsAGoalAndResumeCompletes(t *testing.T) {
	var resumed atomic.Bool
	e := newE2E(t, goalScript(20, func(req agenttest.Request) agenttest.Turn {
		small := agent.Usage{Prompt: 10, Completion: 1}
		switch res := lastToolResult(req); {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return agenttest.Turn{Text: "goal done", Usage: small}
		case resumed.Load():
			id, rev := goalRef(t, req)
			turn := toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"listed twice"}`, id, rev)))
			turn.Usage = small
			return turn
		default:
			return toolTurn(call(fmt.Sprint("l", len(req.Messages)), "ls", `{}`))
		}
	})...)
	e.pricedConfig("\n[runner]\nmax_cost_per_task = 0.0001\n")
	s := e.serve(t)
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	id := s.submit("list until the budget stops you", map[string]any{"goal": true, "posture": "auto"})
	got := s.waitState(id, "budget_exhausted", "succeeded", "failed", "blocked")
	if got.State != "budget_exhausted" || got.Result == nil || !strings.Contains(got.Result.Reason, "cost budget $0.0001 reached") {
		t.Fatalf("task = %+v\n%s", got, s.events(id))
	}
	out, stderr, code := e.run("tasks", "show", id, "--server", s.url)
	if code != exitOK || !strings.Contains(out, "cost      $0.0002") || !strings.Contains(out, "cost budget $0.0001 reached") {
		t.Fatalf("tasks show: %d\n%s\n%s", code, out, stderr)
	}
	resumed.Store(true)
	if out, stderr, code := e.run("tasks", "resume", id, "--server", s.url); code != exitOK {
		t.Fatalf("tasks resume: %d %s %s", code, out, stderr)
	}
	got = s.waitState(id, "succeeded", "failed", "blocked", "budget_exhausted")
	if got.State != "succeeded" || got.Result.Summary != "listed twice" {
		t.Fatalf("resumed task = %+v\n%s", got, s.events(id))
	}
	metrics := s.metrics()
	if !strings.Contains(metrics, `reasonix_cost_usd_total{model="fake/fake-model"}`) {
		t.Errorf("no cost metric:\n%s", metrics)
	}
}

// metrics is the service's Prometheus text.
func (s *service) metrics() string {
	s.t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// config check says what the default model costs, or that a cost budget
// cannot count its calls.
func TestConfigCheckShowsPrices(t *testing.T) {
	e := newE2E(t)
	e.pricedConfig("")
	out, stderr, code := e.run("config", "check")
	if code != exitOK || !strings.Contains(out, "; $1 in, $0.5 cached in, $2 out per million tokens)") {
		t.Errorf("priced: exit %d\n%s%s", code, out, stderr)
	}
	e.configure("\n[runner]\nmax_cost_per_task = 1\n")
	out, stderr, code = e.run("config", "check")
	if code != exitOK || !strings.Contains(out, "unpriced: no prices entry") || !strings.Contains(out, "cost budgets do not count its calls") {
		t.Errorf("unpriced: exit %d\n%s%s", code, out, stderr)
	}
}
