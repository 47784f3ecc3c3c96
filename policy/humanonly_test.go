package policy_test

import (
	"context"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/policy/policytest"
)

// TestHumanOnlyToolsAskUnderEveryPosture: a HumanOnly tool asks a person
// under yolo and auto, a grant for it does not answer, and a deny rule still
// refuses it before anyone is asked; other tools are unaffected.
func TestHumanOnlyToolsAskUnderEveryPosture(t *testing.T) {
	ctx := context.Background()
	call := agent.Call{ID: "c1", Tool: "remember", Args: []byte(`{"text":"x"}`)}
	for _, posture := range []policy.Posture{policy.PostureAsk, policy.PostureAuto, policy.PostureYolo} {
		g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{}), Posture: posture,
			HumanOnly: []string{"remember"}, Grants: []string{"remember"}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := g.Authorize(ctx, call)
		if err != nil || v.Allowed || v.Code != agent.RefusedUnattended {
			t.Errorf("%s, nobody to ask: %+v, %v; want refused unattended", posture, v, err)
		}
		if posture != policy.PostureAsk {
			if v, _ := g.Authorize(ctx, agent.Call{ID: "c2", Tool: "forget", Args: []byte(`{"id":"m"}`)}); !v.Allowed {
				t.Errorf("%s: a tool not listed was refused: %+v", posture, v)
			}
		}
		ap := policytest.NewApprover(policytest.Once())
		g, _ = policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{}), Posture: posture, HumanOnly: []string{"remember"}, Approver: ap})
		if v, err := g.Authorize(ctx, call); err != nil || !v.Allowed || len(ap.Requests()) != 1 {
			t.Errorf("%s, a person allows: %+v, %v, %d requests", posture, v, err, len(ap.Requests()))
		}
	}
	ap := policytest.NewApprover(policytest.Once())
	g, _ := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{Deny: []string{"remember"}}), Posture: policy.PostureYolo,
		HumanOnly: []string{"remember"}, Approver: ap})
	if v, _ := g.Authorize(ctx, call); v.Allowed || v.Code != agent.RefusedByRule || len(ap.Requests()) != 0 {
		t.Errorf("denied HumanOnly tool: %+v, %d requests", v, len(ap.Requests()))
	}
}
