package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A 300-step goal in a small window compacts several times across its
// turns, completes, and its last request still carries the system prompt,
// the goal and the recent tail. Each turn's fresh agent restores the last
// checkpoint from the goal's history instead of summarizing again.
func TestLongGoalCompactsAcrossTurns(t *testing.T) {
	const window, steps, perTurn = 8000, 300, 40
	var script []agenttest.Turn
	for s := range steps {
		if s > 0 && s%perTurn == 0 {
			script = append(script, say(fmt.Sprintf("probed %d so far; continuing next turn", s)))
		}
		script = append(script, calls(call(fmt.Sprintf("p%d", s), "probe", map[string]any{"n": s, "pad": strings.Repeat("x", 400)})))
	}
	script = append(script, calls(complete("end", 1)), say("all probes done"))
	var next, summaries atomic.Int64
	model := agenttest.Windowed(window, func(r agenttest.Request) agenttest.Turn {
		if agenttest.IsSummary(r) {
			summaries.Add(1)
			return agenttest.Turn{Text: "## Goal and constraints\nProbe everything.\n\n## Done so far\nProbed many.\n\n## Next steps\nProbe the rest."}
		}
		return script[next.Add(1)-1]
	})
	p := agenttest.NewScriptedProvider()
	for range len(script) + 100 {
		p.Add(agenttest.Respond(model))
	}
	cfg := base(t, p)
	cfg.ContextWindow = window
	var ev events
	cfg.Observer = ev.observe
	store := &memStore{}
	res, err := newController(t, Config{Agent: cfg, Store: store}).Run(t.Context(), Goal{ID: "g1", Objective: "probe every number up to 299"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.FinalAnswer != "all probes done" {
		t.Fatalf("outcome %s (%s), answer %q", res.Outcome, res.Reason, res.FinalAnswer)
	}
	comps := ev.of(agent.EventContextCompacted)
	if len(comps) < 3 || int(summaries.Load()) != len(comps) {
		t.Fatalf("%d compactions, %d summary calls", len(comps), summaries.Load())
	}
	for _, e := range comps {
		if c := e.Compaction; c.Mode != agent.CompactSummary || c.AfterTokens > window/2 {
			t.Fatalf("compaction %+v", c)
		}
	}
	if res.State.Turns < steps/perTurn {
		t.Fatalf("%d turns", res.State.Turns)
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if last.Messages[0].Content != "stable system prompt" || !strings.Contains(last.Messages[1].Content, "probe every number up to 299") {
		t.Fatalf("last request opens with %.80q, %.200q", last.Messages[0].Content, last.Messages[1].Content)
	}
	tail := ""
	for _, m := range last.Messages[2:] {
		tail += m.Content + "\n"
		for _, c := range m.ToolCalls {
			tail += c.Arguments + "\n"
		}
	}
	end := last.Messages[len(last.Messages)-1]
	if !strings.Contains(tail, `"n":299`) || end.Role != agent.RoleTool || end.Name != "update_goal" {
		t.Fatalf("the last request lost the recent tail: %.500q", tail)
	}
	// The saved conversation is whole: every probe result is in it.
	st := store.load(t)
	probes, marks := 0, 0
	for _, m := range st.History {
		switch {
		case m.Role == agent.RoleTool && m.Name == "probe":
			probes++
		case m.Role == agent.RoleCheckpoint:
			marks++
		}
	}
	if probes != steps || marks != len(comps) {
		t.Fatalf("saved history has %d probe results and %d checkpoints", probes, marks)
	}
}

// A sub-agent compacts in its own window like any agent: a long child run
// in a small window finishes and reports its answer.
func TestSubAgentCompacts(t *testing.T) {
	const window, steps = 6000, 80
	var n atomic.Int64
	p := agenttest.NewScriptedProvider()
	for range 2 * steps {
		p.Add(agenttest.Respond(agenttest.Windowed(window, func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				return agenttest.Turn{Text: "## Done so far\nProbed a lot."}
			}
			if k := int(n.Add(1)) - 1; k < steps {
				return calls(call(fmt.Sprintf("p%d", k), "probe", map[string]any{"n": k, "pad": strings.Repeat("y", 400)}))
			}
			return say("child probed everything")
		})))
	}
	var ev events
	factory := ChildFactoryFunc(func(context.Context, ChildSpec) (agent.Config, error) {
		return agent.Config{Provider: p, Tools: tools(t, echo()), SystemPrompt: "child", ContextWindow: window, Observer: ev.observe}, nil
	})
	h, _ := newHost(t, factory, HostConfig{ReadOnlyProfile: func(string) bool { return true }})
	out, err := taskTool{h: h}.Execute(t.Context(), json.RawMessage(`{"prompt":"probe 80 numbers","profile":"explore"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "child probed everything") {
		t.Fatalf("task result %q", out)
	}
	comps := ev.of(agent.EventContextCompacted)
	if len(comps) == 0 || comps[0].Compaction.Mode != agent.CompactSummary {
		t.Fatalf("child compactions: %d", len(comps))
	}
}

// A giant tool result is bounded for the model; the goal's saved state,
// written after every turn, does not carry its full text (the transcript
// does).
func TestGoalStateLeavesRawResultsToTheTranscript(t *testing.T) {
	big := strings.Repeat("z", 3*agent.MaxToolResult)
	dump := &fakeTool{name: "dump", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return big, nil }}
	p := agenttest.NewScriptedProvider(calls(call("d", "dump", map[string]any{})), calls(complete("c", 1)), say("done"))
	var raw int
	cfg := base(t, p, dump)
	cfg.Observer = func(e agent.Event) {
		if e.Type == agent.EventMessage && e.Message.RawContent == big {
			raw++
		}
	}
	store := &memStore{}
	if res, err := newController(t, Config{Agent: cfg, Store: store}).Run(t.Context(), Goal{ID: "g1", Objective: "dump"}); err != nil || res.Outcome != StatusComplete {
		t.Fatalf("%v %v", res.Outcome, err)
	}
	if raw != 1 {
		t.Fatalf("the transcript saw the full result %d times", raw)
	}
	for _, m := range store.load(t).History {
		if m.Name == "dump" && (m.RawContent != "" || len(m.Content) > agent.MaxToolResult) {
			t.Fatalf("saved state keeps %d raw bytes, %d visible", len(m.RawContent), len(m.Content))
		}
	}
}
