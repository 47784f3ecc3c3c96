package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestRunGoalStallRedirectsWithThePlanner: a goal whose turns repeat the
// same call without progress is not blocked: after three such turns it is
// redirected, the configured [agent] planner_model writes a fresh plan in a
// request of its own (its stable system prompt, no tools), the executor's
// next turn opens with that plan, and the goal completes (exit 0).
func TestRunGoalStallRedirectsWithThePlanner(t *testing.T) {
	var plannerCalls atomic.Int32
	var plannerReq atomic.Value
	e := newE2E(t, goalScript(20, func(req agenttest.Request) agenttest.Turn {
		if req.Model == "plan-model" {
			plannerCalls.Add(1)
			plannerReq.Store(req)
			return answer("1. read other.txt instead")
		}
		last := req.Messages[len(req.Messages)-1]
		switch res := lastToolResult(req); {
		case strings.Contains(res, "Goal marked complete"):
			return answer("done another way")
		case res != "":
			return answer("looked")
		case last.Role == agent.RoleUser && strings.Contains(last.Content, "1. read other.txt instead"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g9", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"read other.txt as the planner proposed"}`, id, rev)))
		default:
			return toolTurn(call("s", "bash", `{"command":"echo same"}`))
		}
	})...)
	e.writeUserConfig(fmt.Sprintf(`
default_model = "fake/fake-model"
[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = ["fake-model", "plan-model"]
api_key_env = "FAKE_API_KEY"
[agent]
planner_model = "fake/plan-model"
`, e.srv.URL))
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "keep looking")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if plannerCalls.Load() != 1 {
		t.Fatalf("planner called %d times", plannerCalls.Load())
	}
	req := plannerReq.Load().(agenttest.Request)
	if len(req.Tools) != 0 || req.Messages[0].Role != agent.RoleSystem || !strings.Contains(req.Messages[0].Content, "You are the planner") ||
		!strings.Contains(req.Messages[1].Content, "<planner-turn>\nGoal: keep looking") {
		t.Fatalf("planner request: tools %d messages %+v", len(req.Tools), req.Messages)
	}
	if strings.Contains(stdout, "stalled") {
		t.Errorf("the goal reported a stall:\n%s", stdout)
	}
}
