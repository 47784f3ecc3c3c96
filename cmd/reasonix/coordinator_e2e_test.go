package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// coordE2E is an installation whose fake provider serves an executor
// ("fake-model") and a planner ("plan-model") on one server; planner and
// executor are the scripts of each model's requests, in order.
type coordE2E struct {
	*e2e
	mu        sync.Mutex
	plans     []agenttest.Request
	execs     []agenttest.Request
	planner   []agenttest.Turn
	executor  []agenttest.Turn
	plannerOn bool
	// execFn, when set, answers the executor's requests instead of executor.
	execFn func(agenttest.Request) agenttest.Turn
}

func newCoordE2E(t *testing.T, planner, executor []agenttest.Turn) *coordE2E {
	c := &coordE2E{planner: planner, executor: executor, plannerOn: true}
	c.e2e = newE2E(t, goalScript(40, func(req agenttest.Request) agenttest.Turn {
		c.mu.Lock()
		defer c.mu.Unlock()
		if req.Model == "plan-model" {
			c.plans = append(c.plans, req)
			if len(c.plans) > len(c.planner) {
				return agenttest.Fail(400, "planner script exhausted", 0)
			}
			return c.planner[len(c.plans)-1]
		}
		c.execs = append(c.execs, req)
		if c.execFn != nil {
			return c.execFn(req)
		}
		if len(c.execs) > len(c.executor) {
			return agenttest.Fail(400, "executor script exhausted", 0)
		}
		return c.executor[len(c.execs)-1]
	})...)
	c.writeUserConfig(fmt.Sprintf(`
default_model = "fake/fake-model"
[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = ["fake-model", "plan-model"]
api_key_env = "FAKE_API_KEY"
max_retries = 0
prices = { "fake-model" = { input = 1.0, output = 2.0 }, "plan-model" = { input = 10.0, output = 20.0 } }
[agent]
planner_model = "fake/plan-model"
planner_effort = "low"
`, c.srv.URL))
	return c
}

func (c *coordE2E) requests() (plans, execs []agenttest.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]agenttest.Request(nil), c.plans...), append([]agenttest.Request(nil), c.execs...)
}

// prefixOf is the part of a request that must stay the same bytes from
// one request to the next: the tools and the first n messages.
func prefixOf(t *testing.T, r agenttest.Request, n int) string {
	t.Helper()
	raw, err := json.Marshal(struct {
		Tools    []agent.ToolSchema
		Messages []agent.Message
	}{r.Tools, r.Messages[:n]})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRunCoordinatorFullRoute: a structured request takes the full route:
// the planner (its own model, effort, read-only research tools) reads a
// file and writes the plan; the executor gets the task with the plan in
// its user message and carries it out. Each session's prefix is the same
// bytes on each of its requests, the planner's cost is in the run's, and
// the transcript holds the phase_detail without the task's words.
func TestRunCoordinatorFullRoute(t *testing.T) {
	c := newCoordE2E(t,
		[]agenttest.Turn{toolTurn(call("p1", "read_file", `{"path":"go.mod"}`)), answer("1. write out.txt\n2. check it")},
		[]agenttest.Turn{toolTurn(call("e1", "write_file", `{"path":"out.txt","content":"x\n"}`)), answer("done")})
	if err := os.WriteFile(filepath.Join(c.work, "go.mod"), []byte("module demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	task := "Tidy the release:\n- bump the version in cmd/zebra/version.go\n- update docs/SPEC.md"
	stdout, stderr, code := c.run("run", "--auto", "--json", task)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	plans, execs := c.requests()
	if len(plans) != 2 || len(execs) != 2 {
		t.Fatalf("%d planner and %d executor requests", len(plans), len(execs))
	}
	var tools []string
	for _, s := range plans[0].Tools {
		tools = append(tools, s.Name)
	}
	if !reflect.DeepEqual(tools, []string{"glob", "grep", "ls", "read_file"}) || plans[0].Effort != "low" {
		t.Fatalf("planner tools %v effort %q", tools, plans[0].Effort)
	}
	if in := plans[0].Messages[1].Content; !strings.HasPrefix(in, "<planner-turn>\ndepth: full\nroute: full\n") || !strings.Contains(in, task) {
		t.Fatalf("planner turn %q", in)
	}
	if res := plans[1].Messages[3].Content; !strings.Contains(res, "module demo") {
		t.Fatalf("the planner's research result %q", res)
	}
	if in := execs[0].Messages[1].Content; !strings.HasPrefix(in, task+"\n\n<plan>\n1. write out.txt\n2. check it\n</plan>\n") {
		t.Fatalf("executor input %q", in)
	}
	if len(execs[0].Tools) <= 4 || strings.Contains(execs[0].Messages[0].Content, "You are the planner") {
		t.Fatalf("the executor's prefix carries the planner's: %d tools", len(execs[0].Tools))
	}
	if prefixOf(t, plans[0], 2) != prefixOf(t, plans[1], 2) || prefixOf(t, execs[0], 2) != prefixOf(t, execs[1], 2) {
		t.Fatal("a session's prefix changed between its requests")
	}
	if _, err := os.Stat(filepath.Join(c.work, "out.txt")); err != nil {
		t.Fatalf("the executor did not carry out the plan: %v", err)
	}
	var res struct {
		Cost   float64 `json:"cost"`
		Models map[string]struct {
			Calls int `json:"calls"`
		} `json:"models"`
		Transcript string `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	// 2 planner calls of 120/20 and 100/10 tokens at 10/20 USD per million,
	// 2 executor calls at 1/2.
	want := (220*10.0+30*20.0)/1e6 + (220*1.0+30*2.0)/1e6
	if res.Models["fake/plan-model"].Calls != 2 || res.Models["fake/fake-model"].Calls != 2 || !nearly(res.Cost, want) {
		t.Fatalf("cost %v (want %v) models %+v", res.Cost, want, res.Models)
	}
	log, err := os.ReadFile(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	var detail string
	for line := range strings.Lines(string(log)) {
		if strings.Contains(line, `"phase_detail"`) {
			detail = line
		}
	}
	if !strings.Contains(detail, `"route":"full"`) || !strings.Contains(detail, `"planner":"planned"`) || strings.Contains(detail, "zebra") {
		t.Fatalf("phase_detail in the transcript: %q", detail)
	}
}

// TestRunCoordinatorRoutes: an atomic edit goes to the executor alone; an
// ambiguous request gets a light plan; a failing planner on the light
// route lets the executor go on with the pristine task.
func TestRunCoordinatorRoutes(t *testing.T) {
	ambiguous := "the nightly job seems off lately, something with the timing of the runs"
	for _, tc := range []struct {
		name, task string
		planner    []agenttest.Turn
		plans      int
		input      string
	}{
		{"executor-only", "Fix the off-by-one in runner/queue.go", nil, 0, "Fix the off-by-one in runner/queue.go"},
		{"light", ambiguous, []agenttest.Turn{answer("1. look at the cron spec")}, 1, ambiguous + "\n\n<plan>\n1. look at the cron spec\n</plan>\n"},
		{"planner fails", ambiguous, []agenttest.Turn{agenttest.Fail(400, "no such model", 0)}, 1, ambiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCoordE2E(t, tc.planner, []agenttest.Turn{answer("ok")})
			stdout, stderr, code := c.run("run", "--json", tc.task)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			plans, execs := c.requests()
			if len(plans) != tc.plans || len(execs) != 1 {
				t.Fatalf("%d planner and %d executor requests", len(plans), len(execs))
			}
			if in := execs[0].Messages[1].Content; !strings.HasPrefix(in, tc.input) || tc.name != "light" && in != tc.input {
				t.Fatalf("executor input %q", in)
			}
			if tc.plans == 1 && !strings.Contains(plans[0].Messages[1].Content, "depth: light") {
				t.Fatalf("planner turn %q", plans[0].Messages[1].Content)
			}
		})
	}
}

// TestRunPlanOnly: --plan-only (or a plan-only request in the text)
// prints the plan, runs no tool and asks the executor nothing; the plan is
// in the transcript. A planner that fails fails the run (exit 1): plan-only
// never falls back to the executor. Without a planner --plan-only is a
// usage error.
func TestRunPlanOnly(t *testing.T) {
	c := newCoordE2E(t, []agenttest.Turn{answer("1. add the flag in run.go\n2. test it")}, nil)
	stdout, stderr, code := c.run("run", "--plan-only", "--auto", "add a --dry-run flag to the run command")
	if code != exitOK || !strings.Contains(stdout, "1. add the flag in run.go") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if plans, execs := c.requests(); len(plans) != 1 || len(execs) != 0 {
		t.Fatalf("%d planner and %d executor requests", len(plans), len(execs))
	}
	entries, err := os.ReadDir(c.work)
	if err != nil || len(entries) != 0 {
		t.Fatalf("the workspace changed: %v %v", entries, err)
	}

	c = newCoordE2E(t, []agenttest.Turn{agenttest.Fail(400, "no such model", 0)}, []agenttest.Turn{answer("executed")})
	stdout, stderr, code = c.run("run", "--auto", "Refactor the store package into two files, plan only")
	if code != exitFailed || strings.Contains(stdout, "executed") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, execs := c.requests(); len(execs) != 0 {
		t.Fatalf("the executor ran after a plan-only planner failed")
	}

	e := newE2E(t)
	_, stderr, code = e.run("run", "--plan-only", "add a flag")
	if code != exitUsage || !strings.Contains(stderr, "planner_model") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// TestRunPlanForApprovalHeadless: a request to wait for approval, in a
// headless run where nobody can approve, prints the plan and exits 3
// (blocked) without executing anything.
func TestRunPlanForApprovalHeadless(t *testing.T) {
	c := newCoordE2E(t, []agenttest.Turn{answer("1. rewrite the scheduler")}, []agenttest.Turn{answer("executed")})
	stdout, stderr, code := c.run("run", "--auto", "Rewrite the scheduler and wait for my approval before you change code")
	if code != exitBlocked || !strings.Contains(stdout, "1. rewrite the scheduler") || !strings.Contains(stderr, "approv") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, execs := c.requests(); len(execs) != 0 {
		t.Fatalf("the executor ran before the plan was approved")
	}
}

// TestRunGoalOpensWithThePlan: a goal's opening turn is routed too: a
// structured objective gets the full plan, which rides in the goal block
// of the executor's turns; the goal completes.
func TestRunGoalOpensWithThePlan(t *testing.T) {
	c := newCoordE2E(t, []agenttest.Turn{answer("1. bump the version\n2. update the SPEC")}, nil)
	// The fake model's handler reads execFn under c.mu: nothing orders
	// this write before a request arrives from the child process.
	c.mu.Lock()
	c.execFn = func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(lastToolResult(req), "Goal marked complete") {
			return answer("released")
		}
		if !strings.Contains(req.Messages[1].Content, "2. update the SPEC") {
			return answer("no plan in the goal block")
		}
		id, rev := goalRef(t, req)
		return toolTurn(call("g1", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"done per the plan"}`, id, rev)))
	}
	c.mu.Unlock()
	task := "Tidy the release:\n- bump the version in cmd/zebra/version.go\n- update docs/SPEC.md"
	stdout, stderr, code := c.run("run", "--goal", "--auto", task)
	if code != exitOK || !strings.Contains(stdout, "released") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if plans, _ := c.requests(); len(plans) != 1 || !strings.Contains(plans[0].Messages[1].Content, "goal: yes") {
		t.Fatalf("planner requests %+v", plans)
	}
}
