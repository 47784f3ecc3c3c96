package main

import (
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/store/storetest"
)

// Two `reasonix serve` nodes share one Postgres database: a fact one
// task remembers on node A is recalled after the prompt of the next task,
// which runs on node B; a remember of a text holding a secret the service
// knows (the provider key) is refused and nothing of it is stored.
func TestServeMemoryRecalledOnAnotherNode(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	const fact = "The staging database resets nightly at 02:00 UTC."
	firstUser := func(req agenttest.Request) string {
		for _, m := range req.Messages {
			if m.Role == "user" {
				return m.Content
			}
		}
		return ""
	}
	turns := goalScript(12, func(req agenttest.Request) agenttest.Turn {
		prompt := firstUser(req)
		res := lastToolResult(req)
		switch {
		case strings.HasPrefix(prompt, "remember when staging resets"):
			if res != "" {
				return answer("saved: " + res)
			}
			return toolTurn(call("m1", "remember", `{"text":"`+fact+`","scope":"user"}`))
		case strings.HasPrefix(prompt, "keep the deploy key"):
			if res != "" {
				return answer("result: " + res)
			}
			return toolTurn(call("m2", "remember", `{"text":"the deploy key is sk-secret-test-key"}`))
		}
		return answer("prompt was: " + prompt)
	})
	a := newE2E(t, turns...)
	b := &e2e{t: t, home: t.TempDir(), work: t.TempDir(), srv: a.srv}
	for _, e := range []*e2e{a, b} {
		e.configure("\n[store]\ndriver = \"postgres\"\ndsn_env = \"RX_TEST_DSN\"\n")
	}
	na := a.serve(t, "RX_TEST_DSN="+dsn)
	nb := b.serve(t, "RX_TEST_DSN="+dsn)
	nb.token = na.token // the same principal on both nodes, so its user memories are the same

	first := na.submit("remember when staging resets", map[string]any{"posture": "auto"})
	// A user fact waits for a person even under auto (seed §3.6).
	na.waitState(first, "waiting_approval")
	aps := na.pending(first)
	if len(aps) != 1 || aps[0].Tool != "remember" {
		t.Fatalf("approvals of the remembering task = %+v", aps)
	}
	if code := na.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, nil); code != 200 {
		t.Fatalf("allowing the user fact: %d", code)
	}
	if got := na.waitState(first, "succeeded", "failed", "blocked"); got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "Remembered as mem_") {
		t.Fatalf("remembering task = %+v", got)
	}
	second := nb.submit("When does the staging database reset?", map[string]any{"posture": "auto"})
	got := nb.waitState(second, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "<recalled-memory") || !strings.Contains(got.Result.FinalAnswer, fact) {
		t.Fatalf("the task on node B did not recall the fact: %+v", got)
	}

	third := na.submit("keep the deploy key", map[string]any{"posture": "auto"})
	got = na.waitState(third, "succeeded", "failed", "blocked")
	if got.Result == nil || !strings.Contains(got.Result.FinalAnswer, "holds a secret") || strings.Contains(got.Result.FinalAnswer, "sk-secret-test-key") {
		t.Fatalf("remembering a secret = %+v", got)
	}
	var list struct {
		Memories []struct {
			Text string `json:"text"`
			By   string `json:"by"`
		} `json:"memories"`
	}
	if code := nb.call("GET", "/api/v1/memories?all=true", nil, &list); code != 200 || len(list.Memories) != 1 || list.Memories[0].Text != fact {
		t.Fatalf("stored memories = %d %+v", code, list)
	}
}
