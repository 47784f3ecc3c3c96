package acp

import (
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/session"
)

// newPlannedClient is a client whose configuration names a planner model
// ([agent] planner_model) scripted apart from the executor.
func newPlannedClient(t *testing.T, planner []agenttest.Turn, executor ...agenttest.Turn) (*client, *agenttest.ScriptedProvider) {
	t.Helper()
	exec := agenttest.NewScriptedProvider(executor...)
	plan := agenttest.NewScriptedProvider(planner...)
	set := config.Default()
	set.Agent.PlannerModel = "planner"
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: set,
		Models: func(ref string) (session.Model, error) {
			if ref == "planner" {
				return session.Model{Provider: plan, Name: "p"}, nil
			}
			return session.Model{Provider: exec, Name: "m"}, nil
		},
		Dir: filepath.Join(dir, "sessions"),
	})
	c.prov, c.dir = exec, dir
	return c, plan
}

func lastUser(r agenttest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == agent.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

func TestCoordinatorPlansForTheExecutor(t *testing.T) {
	c, planner := newPlannedClient(t, []agenttest.Turn{{Text: "1. rename the parser\n2. run the tests"}}, agenttest.Turn{Text: "done"})
	c.initialize()
	id := c.newSession(t.TempDir())
	if got := c.prompt(id, "Rename the parser:\n- rename the type\n- update its callers"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if n := len(planner.Requests()); n != 1 {
		t.Fatalf("the planner got %d requests, want 1", n)
	}
	reqs := c.prov.Requests()
	if len(reqs) != 1 || !strings.Contains(lastUser(reqs[0]), "<plan>\n1. rename the parser") {
		t.Fatalf("the executor did not get the plan: %+v", reqs)
	}
}

func TestCoordinatorPlanForApprovalIsAskedInTheEditor(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "rejected"}[approve], func(t *testing.T) {
			c, _ := newPlannedClient(t, []agenttest.Turn{{Text: "1. rename the parser"}},
				agenttest.Turn{Text: "carried out"}, agenttest.Turn{Text: "next"})
			c.initialize()
			id := c.newSession(t.TempDir())
			stop := c.promptAsync(id, "rename the parser type, but wait for my approval")
			p := awaitPerm(t, c, stop)
			if tc := string(p.Params.ToolCall.ToolCallId); !strings.HasPrefix(tc, "plan-") {
				t.Errorf("the plan is asked on tool call %q", tc)
			}
			// The SDK handles a request beside the notification queue, so
			// the plan sent before the request may be handled just after it.
			waitFor(t, func() bool { return strings.Contains(c.text(id, "agent_message_chunk"), "1. rename the parser") })
			if approve {
				p.Reply <- optApprovePlan
			} else {
				p.Reply <- optRejectPlan
			}
			if got := <-stop; got != "end_turn" {
				t.Fatalf("stop reason %q", got)
			}
			reqs := c.prov.Requests()
			if !approve {
				if len(reqs) != 0 {
					t.Fatalf("a rejected plan reached the executor: %+v", reqs)
				}
				// The held plan stays in the conversation for the next prompt.
				c.prompt(id, "ok")
				reqs = c.prov.Requests()
				var saw bool
				for _, m := range reqs[0].Messages {
					saw = saw || m.Role == agent.RoleAssistant && strings.Contains(m.Content, "1. rename the parser")
				}
				if !saw {
					t.Errorf("the next prompt does not see the held plan: %+v", reqs[0].Messages)
				}
				return
			}
			if len(reqs) != 1 || !strings.Contains(lastUser(reqs[0]), approvedPlan) || !strings.Contains(lastUser(reqs[0]), "1. rename the parser") {
				t.Fatalf("the executor did not get the approved plan: %+v", reqs)
			}
			if tr := c.transcript(id); !strings.Contains(tr, `"tool":"plan"`) || !strings.Contains(tr, `"decided_by":"acp:testeditor"`) {
				t.Errorf("the plan's approval is not recorded:\n%s", tr)
			}
		})
	}
}
