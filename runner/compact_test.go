package runner_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// A service task in a small window compacts (4,500 tokens: the tool
// schemas alone take much of it, and grow with every built-in): the event carries the token
// counts, the stored conversation keeps every message plus the checkpoint,
// and continuing the finished task restores the checkpoint from the store.
func TestServiceTaskCompacts(t *testing.T) {
	ctx := context.Background()
	const window, steps = 4500, 30
	var n, summaries atomic.Int64
	p := agenttest.NewScriptedProvider()
	for range 3 * steps {
		p.Add(agenttest.Respond(agenttest.Windowed(window, func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				summaries.Add(1)
				return agenttest.Turn{Text: "## Done so far\nListed the directory many times."}
			}
			k := int(n.Add(1)) - 1
			switch {
			case k < steps:
				return agenttest.Turn{Text: "Step " + strconv.Itoa(k) + ": " + strings.Repeat("thinking about it. ", 50),
					ToolCalls: []agent.ToolCall{call("c"+strconv.Itoa(k), "ls", map[string]any{"path": "."})}}
			case k == steps:
				return answer("listed")
			}
			return answer("and again")
		})))
	}
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1), ContextWindow: window})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "list the workspace over and over", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed); got.State != store.StateSucceeded {
		for _, e := range runnertest.Events(t, svc, task.ID) {
			t.Logf("%s %s", e.Type, e.Payload)
		}
		t.Fatalf("task %s", got.State)
	}
	evs := runnertest.Events(t, svc, task.ID, "context_compacted")
	if len(evs) == 0 || int(summaries.Load()) != len(evs) {
		t.Fatalf("%d compaction events, %d summaries", len(evs), summaries.Load())
	}
	var c struct {
		Mode   string `json:"mode"`
		Before int    `json:"before_tokens"`
		After  int    `json:"after_tokens"`
		Window int    `json:"window"`
	}
	if err := json.Unmarshal(evs[0].Payload, &c); err != nil || c.Mode != agent.CompactSummary || c.After >= c.Before || c.Window != window {
		t.Fatalf("event %s (%v)", evs[0].Payload, err)
	}

	if queued, err := svc.Message(ctx, task.ID, runner.Principal{ID: "api:alice", Role: store.RoleAdmin}, "once more"); err != nil || queued.State == store.StateSucceeded {
		t.Fatalf("message: %v, %s", err, queued.State)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if last.Messages[1].Content != "list the workspace over and over" || !strings.Contains(last.Messages[2].Content, "<context-digest>") ||
		last.Messages[len(last.Messages)-1].Content != "once more" {
		t.Fatalf("continued request: %.100q / %.100q / %.100q", last.Messages[1].Content, last.Messages[2].Content, last.Messages[len(last.Messages)-1].Content)
	}
}
