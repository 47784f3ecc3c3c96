package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// failTool fails the way a tool does: an error, after some output.
type failTool struct{}

func (failTool) Name() string            { return "check" }
func (failTool) Description() string     { return "runs the checks" }
func (failTool) Schema() json.RawMessage { return nil }
func (failTool) ReadOnly() bool          { return true }
func (failTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "=== RUN   TestParse\n" + strings.Repeat("noise line\n", 400) +
		"    parse_test.go:41: want 3 got 4\n--- FAIL: TestParse (0.00s)\n" + strings.Repeat("more noise\n", 400), errors.New("1 check failed")
}

// A [[keep]] turn survives a fold verbatim whatever its size, an unmarked
// turn past the budget folds with a warning, and a failed result keeps its
// failure-carrying lines and only those.
func TestKeepMarkerAndFailureLines(t *testing.T) {
	const window = 40_000                           // one requester turn may spend 1000 tokens
	big := strings.Repeat("constraint words ", 400) // ~2300 tokens
	marked := agent.KeepMarker + " MARKED-TURN " + big
	unmarked := "UNMARKED-TURN " + big
	var summaryInput string
	p := agenttest.NewScriptedProvider()
	script := []agenttest.Turn{
		{Text: "noted"},
		{Text: "noted"},
		{Text: "noted"},
		{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "check", Arguments: `{}`}}},
		{Text: "checked"},
	}
	turn := 0
	for range 10 {
		p.Add(agenttest.Respond(func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				summaryInput = r.Messages[len(r.Messages)-1].Content
				return agenttest.Turn{Text: "## Done so far\nsummarized"}
			}
			turn++
			return script[turn-1]
		}))
	}
	tools := agent.NewToolRegistry()
	if err := tools.Add(failTool{}); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, ContextWindow: window, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{testTask, marked, unmarked, "SHORT-TURN run the checks"} {
		a.Run(t.Context(), in)
	}
	if res := a.Run(t.Context(), "/compact"); !strings.Contains(res.FinalAnswer, "context compacted") {
		t.Fatalf("/compact: %q", res.FinalAnswer)
	}
	if summaryInput == "" {
		t.Fatal("no summary call")
	}
	cps := checkpoints(a.Messages())
	if len(cps) != 1 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	cp := cps[0].Checkpoint
	kept := strings.Join(cp.Kept, "\n")
	if !strings.Contains(kept, marked) {
		t.Error("the [[keep]] turn was not kept verbatim")
	}
	if strings.Contains(kept, "UNMARKED-TURN") {
		t.Error("the unmarked turn past the budget was kept")
	}
	if !strings.Contains(kept, "SHORT-TURN") {
		t.Error("the short turn was not kept")
	}
	failures := strings.Join(cp.Failures, "\n")
	if !strings.Contains(failures, "--- FAIL: TestParse") || !strings.Contains(failures, "error: 1 check failed") {
		t.Errorf("failure lines not kept: %q", failures)
	}
	if strings.Contains(failures, "noise") || strings.Contains(failures, "=== RUN") {
		t.Errorf("failure lines carry more than the failure: %q", failures)
	}
	cs := ev.compactions()
	if len(cs) != 1 || cs[0].DroppedTurns != 1 || !strings.Contains(cs[0].Warning, agent.KeepMarker) {
		t.Fatalf("compaction %+v", cs)
	}
}

// The marked turns have a budget of their own, newest first: past it the
// oldest marked turn folds too, and the fold says so.
func TestKeepMarkedBudgetDropsOldestFirst(t *testing.T) {
	const window = 20_000 // marked budget 3000 tokens
	turn := func(tag string) string {
		return agent.KeepMarker + " " + tag + " " + strings.Repeat("word ", 1400) // ~2300 tokens
	}
	p := agenttest.NewScriptedProvider()
	for range 10 {
		p.Add(agenttest.Respond(func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				return agenttest.Turn{Text: "## Done so far\nsummarized"}
			}
			return agenttest.Turn{Text: "ok"}
		}))
	}
	ev := &events{}
	a, err := agent.New(agent.Config{Provider: p, ContextWindow: window, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{testTask, turn("OLDER-MARK"), turn("NEWER-MARK"), "last"} {
		a.Run(t.Context(), in)
	}
	a.Run(t.Context(), "/compact")
	cps := checkpoints(a.Messages())
	if len(cps) != 1 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	kept := strings.Join(cps[0].Checkpoint.Kept, "\n")
	if !strings.Contains(kept, "NEWER-MARK") || strings.Contains(kept, "OLDER-MARK") {
		t.Fatalf("kept the wrong marked turn: newer %v older %v", strings.Contains(kept, "NEWER-MARK"), strings.Contains(kept, "OLDER-MARK"))
	}
	if cs := ev.compactions(); len(cs) != 1 || cs[0].DroppedTurns != 1 || cs[0].Warning == "" {
		t.Fatalf("compaction %+v", cs)
	}
}
