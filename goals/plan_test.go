package goals

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/policy"
)

// reviews records proposals and answers with decisions in order.
type reviews struct {
	mu        sync.Mutex
	proposals []PlanProposal
	decisions []PlanDecision
}

func (r *reviews) ReviewPlan(_ context.Context, p PlanProposal) (PlanDecision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proposals = append(r.proposals, p)
	d := r.decisions[0]
	r.decisions = r.decisions[1:]
	return d, nil
}

func planCall(id, status string) agent.ToolCall {
	return call(id, "todo_write", map[string]any{"todos": []map[string]string{{"content": "change the config", "status": status}}})
}

func TestPlanFirstApprovedPlanRunsInTheApprovedPlanWindow(t *testing.T) {
	var wrote []string
	poke := &fakeTool{name: "poke", run: func(_ context.Context, a json.RawMessage) (string, error) {
		wrote = append(wrote, string(a))
		return "changed", nil
	}}
	p := agenttest.NewScriptedProvider(
		calls(call("r", "probe", map[string]any{"q": "config"}), planCall("p1", "pending")),
		say("Plan: change the config, then verify."),
		calls(call("w", "poke", map[string]any{"file": "config"}), planCall("p2", "completed")),
		calls(complete("c", 2)),
		say("done"),
	)
	pol, err := policy.New(policy.Config{Deny: []string{"danger"}})
	if err != nil {
		t.Fatal(err)
	}
	rv := &reviews{decisions: []PlanDecision{{Approved: true}}}
	ev := &events{}
	cfg := base(t, p, poke)
	cfg.Observer = ev.observe
	c := newController(t, Config{Agent: cfg, Approver: rv, Policy: pol})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "update the config", PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || !res.State.PlanApproved || len(wrote) != 1 {
		t.Fatalf("outcome %s approved %v writes %v (%s)", res.Outcome, res.State.PlanApproved, wrote, res.Reason)
	}
	planning := toolNames(p.Requests()[0])
	if planning["poke"] || planning["update_goal"] || !planning["probe"] || !planning["todo_write"] {
		t.Fatalf("planning pass tools: %v", planning)
	}
	if !strings.Contains(lastUser(p.Requests()[0]), "Plan first") {
		t.Fatal("the planning turn did not say it plans")
	}
	if len(rv.proposals) != 1 || rv.proposals[0].Summary != "Plan: change the config, then verify." || len(rv.proposals[0].Plan) != 1 {
		t.Fatalf("proposals %+v", rv.proposals)
	}
	if !toolNames(p.Requests()[2])["poke"] || !strings.Contains(lastUser(p.Requests()[2]), "plan was approved") {
		t.Fatal("the executor did not get the writers or the approval notice")
	}
	if len(ev.of(EventPlanApproval)) != 1 {
		t.Fatal("no plan approval event")
	}
}

func TestPlanFirstRejectedWithFeedbackReplans(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(planCall("p1", "pending")), say("Plan A"),
		calls(planCall("p2", "pending")), say("Plan B, covering docs"),
		calls(planCall("p3", "completed")), calls(complete("c", 2)), say("done"),
	)
	rv := &reviews{decisions: []PlanDecision{{Feedback: "also update the docs"}, {Approved: true}}}
	c := newController(t, Config{Agent: base(t, p), Approver: rv})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "x", PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.PlanRounds != 2 {
		t.Fatalf("outcome %s rounds %d (%s)", res.Outcome, res.State.PlanRounds, res.Reason)
	}
	if len(rv.proposals) != 2 || rv.proposals[1].Round != 2 || rv.proposals[1].Summary != "Plan B, covering docs" {
		t.Fatalf("proposals %+v", rv.proposals)
	}
	if in := lastUser(p.Requests()[2]); !strings.Contains(in, "also update the docs") || !strings.Contains(in, "Plan first") {
		t.Fatalf("re-plan turn lacks the feedback: %q", in)
	}
}

func TestPlanRejectedTooOftenBlocks(t *testing.T) {
	p := agenttest.NewScriptedProvider(say("Plan A"), say("Plan B"))
	rv := &reviews{decisions: []PlanDecision{{Feedback: "no"}, {Feedback: "still no"}}}
	c := newController(t, Config{Agent: base(t, p), Approver: rv, MaxPlanRounds: 2})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "x", PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBlocked || !strings.Contains(res.Question, "still no") {
		t.Fatalf("outcome %s question %q", res.Outcome, res.Question)
	}
}

func TestApprovedPlanGateAllowsOnlyTheWriterFallback(t *testing.T) {
	pol, err := policy.New(policy.Config{Ask: []string{"risky"}, Deny: []string{"danger"}})
	if err != nil {
		t.Fatal(err)
	}
	g := ApprovedPlanGate(pol, "", nil)
	for _, tc := range []struct {
		tool string
		args string
		want bool
	}{
		{"poke", `{}`, true},                            // writer fallback: allowed in the window
		{"risky", `{}`, false},                          // explicit ask rule: still needs a person
		{"danger", `{}`, false},                         // deny rule
		{"bash", `{"command":"echo $(whoami)"}`, false}, // nested execution needs a human
		{"bash", `{"command":"go test ./..."}`, true},   // ordinary command under the fallback
	} {
		v, err := g.Authorize(t.Context(), agent.Call{Tool: tc.tool, Args: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatal(err)
		}
		if v.Allowed != tc.want {
			t.Errorf("%s %s: allowed %v, want %v (%s)", tc.tool, tc.args, v.Allowed, tc.want, v.Reason)
		}
	}
}
