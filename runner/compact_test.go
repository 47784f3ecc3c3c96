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
	const window, steps = 6000, 30 // the built-in tools' schemas alone take about 3,500 tokens
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
	// Only the tool the script calls: the window is small, and every
	// built-in's schema is in the prefix that must fit beside the tail.
	set := settings(1)
	set.Tools.Enabled = []string{"ls"}
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: set, ContextWindow: window})
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

// /compact sent to a finished task (a chat reply, `tasks message`) folds
// its conversation into exactly one checkpoint without a model turn, and
// the next message continues from that checkpoint.
func TestMessageCompactMakesOneCheckpoint(t *testing.T) {
	ctx := context.Background()
	const window = 100_000 // far below the trigger: only the command folds
	var n, summaries atomic.Int64
	p := agenttest.NewScriptedProvider()
	for range 20 {
		p.Add(agenttest.Respond(agenttest.Windowed(window, func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				summaries.Add(1)
				return agenttest.Turn{Text: "## Done so far\nListed the directory."}
			}
			k := int(n.Add(1)) - 1
			if k < 4 {
				return agenttest.Turn{Text: "Step " + strconv.Itoa(k) + ": " + strings.Repeat("thinking about it. ", 50),
					ToolCalls: []agent.ToolCall{call("c"+strconv.Itoa(k), "ls", map[string]any{"path": "."})}}
			}
			return answer("listed")
		})))
	}
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1), ContextWindow: window})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "list the workspace a few times", Posture: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	admin := runner.Principal{ID: "api:alice", Role: store.RoleAdmin}
	if _, err := svc.Message(ctx, task.ID, admin, "/compact"); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	evs := runnertest.Events(t, svc, task.ID, "context_compacted")
	if len(evs) != 1 || summaries.Load() != 1 {
		t.Fatalf("%d compaction events, %d summaries; want one each", len(evs), summaries.Load())
	}
	var c agent.Compaction
	if err := json.Unmarshal(evs[0].Payload, &c); err != nil || c.Source != agent.FoldCommand || c.Folded == 0 {
		t.Fatalf("event %s (%v)", evs[0].Payload, err)
	}
	before := len(p.Requests())
	if _, err := svc.Message(ctx, task.ID, admin, "and now?"); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded)
	reqs := p.Requests()[before:]
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[2].Content, "Listed the directory.") {
		for _, e := range runnertest.Events(t, svc, task.ID) {
			t.Logf("%s %.300s", e.Type, e.Payload)
		}
		t.Fatalf("%d requests after; the digest not where expected", len(reqs))
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "/compact") {
			t.Fatal("the /compact command reached the model")
		}
	}
}
