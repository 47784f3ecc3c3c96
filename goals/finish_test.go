package goals

import (
	"testing"

	"reasonix/agent/agenttest"
)

// TestResultCarriesTheFinishReason: the last answer's finish reason
// reaches the Result, so a front end can say the answer was cut at the
// output limit (ACP's max_tokens) or refused.
func TestResultCarriesTheFinishReason(t *testing.T) {
	for _, finish := range []string{"length", "stop"} {
		cut := say("finished, but the answer was cut")
		cut.FinishReason = finish
		p := agenttest.NewScriptedProvider(calls(complete("1", 1)), cut)
		res, err := newController(t, Config{Agent: base(t, p), Store: &memStore{}}).Run(t.Context(), Goal{ID: "g1", Objective: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != StatusComplete || res.FinishReason != finish {
			t.Errorf("outcome %s, finish reason %q, want complete and %q", res.Outcome, res.FinishReason, finish)
		}
	}
}
