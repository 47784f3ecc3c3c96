package acp

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

var goalTag = regexp.MustCompile(`<goal id="([^"]+)" revision="(\d+)">`)

// goalModel completes the goal on its first turn, then answers.
func goalModel(t *testing.T) agenttest.Turn {
	return agenttest.Turn{Handler: func(r agenttest.Request) agenttest.Turn {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == agent.RoleTool {
			return agenttest.Turn{Text: "Goal done: nothing to change."}
		}
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if m := goalTag.FindStringSubmatch(r.Messages[i].Content); m != nil {
				return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "g1", Name: "update_goal",
					Arguments: fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"checked"}`, m[1], m[2])}}}
			}
		}
		t.Errorf("a goal turn without the goal block: %+v", r.Messages)
		return agenttest.Turn{Text: "?"}
	}}
}

func TestGoalModeRunsTheGoalAndKeepsOneExchange(t *testing.T) {
	c := newClient(t, goalModel(t), goalModel(t), agenttest.Turn{Text: "after"})
	c.initialize()
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	if got := c.prompt(id, "make sure the tree is clean"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, "Goal done") {
		t.Errorf("streamed %q", got)
	}
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "normal"}, nil)
	if got := c.prompt(id, "and now?"); got != "end_turn" {
		t.Fatal(got)
	}
	reqs := c.prov.Requests()
	msgs := reqs[len(reqs)-1].Messages[1:] // without the system prompt
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role)+":"+m.Content)
	}
	want := []string{"user:make sure the tree is clean", "assistant:Goal done: nothing to change.", "user:and now?"}
	if strings.Join(roles, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation after the goal is %q, want %q", roles, want)
	}
}

func TestSteerReachesAGoalTurn(t *testing.T) {
	model := agenttest.Turn{Handler: func(r agenttest.Request) agenttest.Turn {
		tools := 0
		for _, m := range r.Messages {
			if m.Role == agent.RoleTool {
				tools++
			}
		}
		switch tools {
		case 0:
			return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"x.txt","content":"x"}`}}}
		case 1:
			for i := len(r.Messages) - 1; i >= 0; i-- {
				if m := goalTag.FindStringSubmatch(r.Messages[i].Content); m != nil {
					return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "g1", Name: "update_goal",
						Arguments: fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"wrote x"}`, m[1], m[2])}}}
				}
			}
		}
		return agenttest.Turn{Text: "done"}
	}}
	c := newClient(t, model, model, model)
	c.initialize()
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	stop := c.promptAsync(id, "write x")
	p := <-c.perms
	c.call(SteerMethod, map[string]any{"sessionId": id, "prompt": []any{map[string]string{"type": "text", "text": "keep it short"}}}, nil)
	p.Reply <- optAllowOnce
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	reqs := c.prov.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != agent.RoleUser || last.Content != "keep it short" {
		t.Errorf("the goal turn's next request ends with %+v, want the steer", last)
	}
}
