package main

import (
	"fmt"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A fleet child is offered the parent's MCP tools and calls one through
// its own gate: the plugin's answer reaches the child's conversation.
func TestRunGoalFleetChildCallsAnMCPTool(t *testing.T) {
	e := newE2E(t, goalScript(12, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[0].Content, "sub-agent") {
			if res := lastToolResult(req); res != "" {
				return answer("child got: " + res)
			}
			return toolTurn(call("m1", "mcp__example__echo", `{"text":"echoed-by-the-plugin"}`))
		}
		res := lastToolResult(req)
		switch {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("fleet done")
		case strings.Contains(res, "child"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"the child used the plugin"}`, id, rev)))
		default:
			return toolTurn(call("g1", "fleet", `{"items":[{"id":"ask","prompt":"echo through the plugin"},{"id":"again","prompt":"echo it again"}]}`))
		}
	})...)
	e.configure(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	stdout, stderr, code := e.run("run", "--goal", "--auto", "--json", "use a fleet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var offered, answered bool
	for _, r := range e.srv.Requests() {
		if !strings.Contains(r.Messages[0].Content, "sub-agent") {
			continue
		}
		for _, tl := range r.Tools {
			offered = offered || tl.Name == "mcp__example__echo"
		}
		for _, m := range r.Messages {
			answered = answered || m.Role == agent.RoleTool && m.ToolCallID == "m1" && strings.Contains(m.Content, "echoed-by-the-plugin")
		}
	}
	if !offered || !answered {
		t.Fatalf("child offered the MCP tool: %v; child got its result: %v\n%s", offered, answered, stdout)
	}
}
