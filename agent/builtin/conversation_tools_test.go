package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// bigTool returns a long, numbered text: more than MaxToolResult.
type bigTool struct{ text string }

func (bigTool) Name() string            { return "big" }
func (bigTool) Description() string     { return "returns a lot" }
func (bigTool) Schema() json.RawMessage { return nil }
func (bigTool) ReadOnly() bool          { return true }
func (b bigTool) Execute(context.Context, json.RawMessage) (string, error) {
	return b.text, nil
}

func bigText() string {
	var b strings.Builder
	for i := 0; b.Len() < 3*agent.MaxToolResult; i++ {
		fmt.Fprintf(&b, "line %d — ünïcödé %s\n", i, strings.Repeat("x", i%50))
	}
	return b.String()
}

// A bounded result names the tool that reads it whole, and paging with
// next_offset through tool_result gives back exactly the full text.
func TestToolResultPagesThroughABoundedResult(t *testing.T) {
	full := bigText()
	var pages []string
	next := 0
	p := agenttest.NewScriptedProvider()
	p.Add(agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "call_big", Name: "big", Arguments: `{}`}}})
	for range 40 {
		p.Add(agenttest.Respond(func(r agenttest.Request) agenttest.Turn {
			last := r.Messages[len(r.Messages)-1]
			if last.Name == "big" && !strings.Contains(last.Content, `tool_result {"tool_call_id": "call_big"}`) {
				t.Errorf("the bounded result does not say how to read it: %q", last.Content[len(last.Content)-200:])
			}
			if last.Name == agent.ToolResultTool {
				head, body, _ := strings.Cut(last.Content, "\n\n")
				pages = append(pages, body)
				for line := range strings.SplitSeq(head, "\n") {
					if v, ok := strings.CutPrefix(line, "next_offset: "); ok {
						next, _ = strconv.Atoi(v)
					}
					if line == "complete: true" {
						return agenttest.Turn{Text: "read it all"}
					}
				}
			}
			args := fmt.Sprintf(`{"tool_call_id":"call_big","offset":%d,"limit":7001}`, next)
			return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: fmt.Sprintf("page_%d", len(pages)), Name: agent.ToolResultTool, Arguments: args}}}
		}))
	}
	env, _ := testEnv(t)
	tools := agent.NewToolRegistry()
	if err := tools.AddBuiltins(env, []string{agent.ToolResultTool}); err != nil {
		t.Fatal(err)
	}
	if err := tools.Add(bigTool{text: full}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Run(t.Context(), "read the big result"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %v %v", res.Outcome, res.Err)
	}
	if got := strings.Join(pages, ""); got != full {
		t.Fatalf("paged text differs: %d bytes in %d pages, want %d", len(got), len(pages), len(full))
	}
	for i, pg := range pages {
		if len(pg) > 7001 {
			t.Errorf("page %d is %d bytes, over the limit", i, len(pg))
		}
	}
}

// compress, called by the model as a requester asked, commits one
// checkpoint and the next request carries the digest.
func TestCompressFoldsTheNamedRange(t *testing.T) {
	p := agenttest.NewScriptedProvider()
	step := 0
	for range 10 {
		p.Add(agenttest.Respond(func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				return agenttest.Turn{Text: "## Done so far\nTHE-DIGEST"}
			}
			step++
			switch step {
			case 1:
				return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "b1", Name: "big", Arguments: `{}`}}}
			case 3:
				return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "compress", Arguments: `{"from":"look at the big thing"}`}}}
			}
			return agenttest.Turn{Text: "ok"}
		}))
	}
	env, _ := testEnv(t)
	tools := agent.NewToolRegistry()
	if err := tools.AddBuiltins(env, []string{"compress"}); err != nil {
		t.Fatal(err)
	}
	if err := tools.Add(bigTool{text: strings.Repeat("bulk ", 5000)}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, ContextWindow: 128_000})
	if err != nil {
		t.Fatal(err)
	}
	a.Run(t.Context(), "look at the big thing")
	a.Run(t.Context(), "please compress the context")
	var cps, results []agent.Message
	for _, m := range a.Messages() {
		switch m.Role {
		case agent.RoleCheckpoint:
			cps = append(cps, m)
		case agent.RoleTool:
			results = append(results, m)
		}
	}
	if len(cps) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(cps))
	}
	if last := results[len(results)-1]; !strings.HasPrefix(last.Content, "folded ") {
		t.Fatalf("compress result %q", last.Content)
	}
	final := p.Requests()[len(p.Requests())-1]
	var sawDigest, sawBulk bool
	for _, m := range final.Messages {
		sawDigest = sawDigest || strings.Contains(m.Content, "THE-DIGEST")
		sawBulk = sawBulk || strings.Contains(m.Content, "bulk bulk")
	}
	if !sawDigest || sawBulk {
		t.Fatalf("after compress: digest %v, bulk still there %v", sawDigest, sawBulk)
	}
}
