package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A tool call that waits for a person suspends the goal; resuming it later
// (from the saved state, as after a restart) runs exactly that call once
// and the goal goes on.
func TestSuspendedCallResumesExactlyThere(t *testing.T) {
	var writes int
	poke := &fakeTool{name: "poke", run: func(context.Context, json.RawMessage) (string, error) {
		writes++
		return "poked", nil
	}}
	p := agenttest.NewScriptedProvider(
		calls(call("w", "poke", map[string]any{"file": "a"})),
	)
	approved := false
	gate := agent.GateFunc(func(_ context.Context, c agent.Call) (agent.Verdict, error) {
		if c.ReadOnly || approved {
			return agent.Allow, nil
		}
		return agent.Verdict{}, fmt.Errorf("approval ap_1 requested: %w", agent.ErrSuspend)
	})
	store := &memStore{}
	cfg := base(t, p, poke)
	cfg.Gate = gate
	c := newController(t, Config{Agent: cfg, Store: store})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "poke a"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusSuspended || writes != 0 || !res.State.Suspended {
		t.Fatalf("outcome %s writes %d suspended %v", res.Outcome, writes, res.State.Suspended)
	}

	// Later: the approval was given; a fresh controller resumes the saved state.
	approved = true
	saved := store.load(t)
	p.Add(calls(complete("1", saved.Revision+1)), say("done"))
	res, err = c.Resume(t.Context(), saved, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || writes != 1 {
		t.Fatalf("after resume: outcome %s (%s) writes %d", res.Outcome, res.Reason, writes)
	}
	// The continued turn asked the model nothing new before running the call.
	reqs := p.Requests()
	if n := len(reqs); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}
	msgs := reqs[1].Messages
	if last := msgs[len(msgs)-1]; last.Role != agent.RoleTool || last.Content != "poked" {
		t.Fatalf("the resumed request does not end with the approved call's result: %+v", last)
	}
}

// A plan waiting for a person suspends the goal; on resume the same plan is
// reviewed again and, approved, carried out.
func TestSuspendedPlanReviewResumes(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(planCall("p1", "pending")),
		say("Plan: do the thing."),
	)
	rounds := 0
	suspendFirst := PlanApproverFunc(func(_ context.Context, pp PlanProposal) (PlanDecision, error) {
		rounds++
		if rounds == 1 {
			return PlanDecision{}, fmt.Errorf("plan approval requested: %w", agent.ErrSuspend)
		}
		return PlanDecision{Approved: true}, nil
	})
	store := &memStore{}
	c := newController(t, Config{Agent: base(t, p), Approver: suspendFirst, Store: store})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "do the thing", PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusSuspended || !res.State.PlanPending {
		t.Fatalf("outcome %s plan pending %v", res.Outcome, res.State.PlanPending)
	}
	saved := store.load(t)
	p.Add(calls(planCall("p2", "completed")), calls(complete("1", saved.Revision+2)), say("done"))
	res, err = c.Resume(t.Context(), saved, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || rounds != 2 || len(p.Requests()) != 5 {
		t.Fatalf("after resume: outcome %s (%s), reviews %d, requests %d", res.Outcome, res.Reason, rounds, len(p.Requests()))
	}
}
