package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/testenv"
)

var goalTag = regexp.MustCompile(`<goal id="([^"]+)" revision="(\d+)">`)

// goalRef finds the goal id and revision the controller put on the latest user turn.
func goalRef(t *testing.T, req agenttest.Request) (string, string) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := goalTag.FindStringSubmatch(req.Messages[i].Content); m != nil {
			return m[1], m[2]
		}
	}
	t.Errorf("no goal block in the request")
	return "", "0"
}

func lastToolResult(req agenttest.Request) string {
	m := req.Messages[len(req.Messages)-1]
	if m.Role != agent.RoleTool {
		return ""
	}
	return m.Content
}

// goalScript answers every request with fn, so concurrent sub-agents and the
// parent can share one fake model.
func goalScript(n int, fn func(req agenttest.Request) agenttest.Turn) []agenttest.Turn {
	turns := make([]agenttest.Turn, n)
	for i := range turns {
		turns[i] = agenttest.Respond(fn)
	}
	return turns
}

func TestRunGoalCompletes(t *testing.T) {
	var e *e2e
	e = newE2E(t, goalScript(6, func(req agenttest.Request) agenttest.Turn {
		switch res := lastToolResult(req); {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("Goal done: wrote result.txt.")
		case strings.Contains(res, "exit code: 0"):
			id, rev := goalRef(t, req)
			return toolTurn(call("c2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"wrote result.txt and checked it"}`, id, rev)))
		default:
			return toolTurn(call("c1", "bash", `{"command":"echo 42 > result.txt && cat result.txt"}`))
		}
	})...)
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "write 42 to result.txt")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if res["status"] != "succeeded" || res["outcome"] != "complete" || res["final_answer"] != "Goal done: wrote result.txt." {
		t.Errorf("result = %v", res)
	}
	for _, k := range []string{"subagent_runs", "subagent_tool_calls", "completion_reports", "false_completions", "criterion_downgrades", "write_scope_violations"} {
		if _, ok := res[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
	// The goal block rides on the user turn, never in the system prompt.
	first := e.srv.Requests()[0]
	if strings.Contains(first.Messages[0].Content, "<goal") || !goalTag.MatchString(first.Messages[len(first.Messages)-1].Content) {
		t.Errorf("goal block misplaced: %+v", first.Messages)
	}
}

func TestRunGoalBlockedExitsThree(t *testing.T) {
	e := newE2E(t, goalScript(4, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(lastToolResult(req), "blocked") {
			return answer("I am blocked: the database credentials are missing.")
		}
		id, rev := goalRef(t, req)
		return toolTurn(call("b1", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"blocked","reason":"no database credentials","question":"Which database should I use?"}`, id, rev)))
	})...)
	stdout, stderr, code := e.run("run", "--goal", "--json", "migrate the database")
	if code != exitBlocked {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res map[string]any
	json.Unmarshal([]byte(stdout), &res)
	if res["status"] != "blocked" || res["question"] != "Which database should I use?" {
		t.Errorf("result = %v", res)
	}
}

func TestRunGoalBudgetExitsFour(t *testing.T) {
	e := newE2E(t, goalScript(10, func(req agenttest.Request) agenttest.Turn {
		if len(req.Messages) > 3 {
			return answer("still working on it")
		}
		return toolTurn(call(fmt.Sprint(len(req.Messages)), "ls", `{}`))
	})...)
	e.configure(`
[agent]
goal_max_turns = 1
`)
	stdout, stderr, code := e.run("run", "--goal", "--json", "an endless goal")
	if code != exitBudget {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `"status":"budget_exhausted"`) {
		t.Errorf("stdout = %s", stdout)
	}
}

func TestRunGoalFleetOfSubagents(t *testing.T) {
	e := newE2E(t, goalScript(12, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[0].Content, "sub-agent") {
			task := req.Messages[len(req.Messages)-1].Content
			switch {
			case strings.Contains(lastToolResult(req), "ok"):
				return answer("child finished")
			case strings.Contains(task, "count files"):
				return toolTurn(call("k1", "ls", `{}`))
			default:
				return answer("child answer for: " + strings.SplitN(task, "\n", 2)[0])
			}
		}
		res := lastToolResult(req)
		switch {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("fleet done")
		case strings.Contains(res, "child"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"both children answered"}`, id, rev)))
		default:
			return toolTurn(call("g1", "fleet", `{"items":[{"id":"look","prompt":"count files"},{"id":"report","prompt":"summarize","depends_on":["look"]}]}`))
		}
	})...)
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "investigate with a fleet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res map[string]any
	json.Unmarshal([]byte(stdout), &res)
	if res["subagent_runs"] != float64(2) {
		t.Errorf("subagent_runs = %v\n%s", res["subagent_runs"], stdout)
	}
	// The dependent child opened with its upstream's answer.
	var sawUpstream bool
	for _, r := range e.srv.Requests() {
		for _, m := range r.Messages {
			sawUpstream = sawUpstream || strings.Contains(m.Content, "<upstream-results>") && strings.Contains(m.Content, "child")
		}
	}
	if !sawUpstream {
		t.Error("the dependent child never saw its upstream's answer")
	}
}

// A sub-agent that claims pkg/ writes there, but neither its file tools nor
// its sandboxed bash can write anywhere else in the workspace.
func TestRunGoalSubagentStaysInItsClaim(t *testing.T) {
	testenv.LookPath(t, testenv.Bwrap)
	e := newE2E(t, goalScript(12, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[0].Content, "sub-agent") {
			switch n := len(req.Messages); {
			case n <= 2:
				return toolTurn(
					call("s1", "bash", `{"command":"echo in > pkg/in.txt; echo out > escaped.txt; echo done"}`),
					call("s2", "write_file", `{"path":"also-escaped.txt","content":"x"}`))
			default:
				return answer("child finished")
			}
		}
		res := lastToolResult(req)
		switch {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("done")
		case strings.Contains(res, "child"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"delegated"}`, id, rev)))
		default:
			return toolTurn(call("g1", "task", `{"prompt":"write pkg/in.txt","write_paths":["pkg"]}`))
		}
	})...)
	e.configure("\n[sandbox]\nbash = \"enforce\"\n")
	if err := os.MkdirAll(filepath.Join(e.work, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "delegate a write")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "pkg", "in.txt")); string(data) != "in\n" {
		t.Errorf("pkg/in.txt = %q: the claimed write did not happen", data)
	}
	for _, f := range []string{"escaped.txt", "also-escaped.txt"} {
		if _, err := os.Stat(filepath.Join(e.work, f)); err == nil {
			t.Errorf("%s was written outside the claim", f)
		}
	}
	if !strings.Contains(stdout, `"write_scope_violations":1`) {
		t.Errorf("the refused write_file is not counted: %s", stdout)
	}
}

// The control arm of the delegation measurement: the same goal without the
// task and fleet tools, counted the same way.
func TestRunGoalAblateSubagentOffersNoDelegation(t *testing.T) {
	var e *e2e
	e = newE2E(t, goalScript(4, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(lastToolResult(req), "complete") {
			return answer("done alone")
		}
		id, rev := goalRef(t, req)
		return toolTurn(call("c1", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"nothing to do"}`, id, rev)))
	})...)
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "--ablate", "subagent", "say hello")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if res["ablate"] != "subagent" || res["subagent_runs"] != float64(0) {
		t.Errorf("result = %v", res)
	}
	for _, k := range []string{"subagent_nested_runs", "subagent_mutations", "duplicate_work_paths", "completions_prose_only"} {
		if _, ok := res[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
	tools := map[string]bool{}
	for _, s := range e.srv.Requests()[0].Tools {
		tools[s.Name] = true
	}
	if tools["task"] || tools["fleet"] || !tools["update_goal"] || !tools["read_subagent_result"] {
		t.Errorf("the control arm's tools: %v", tools)
	}
	if _, stderr, code := e.run("run", "--goal", "--ablate", "planner", "x"); code != exitUsage || !strings.Contains(stderr, "--ablate takes subagent") {
		t.Errorf("--ablate planner: exit %d, %s", code, stderr)
	}
}
