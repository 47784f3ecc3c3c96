package goals

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

var allow = agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) { return agent.Allow, nil })

func okBash() *fakeTool {
	return &fakeTool{name: "bash", run: func(context.Context, json.RawMessage) (string, error) { return "ok\nexit code: 0", nil }}
}

func report(status string, criteria ...map[string]any) map[string]any {
	return map[string]any{"status": status, "summary": status + " work", "acceptance_criteria": criteria}
}

// A depth-2 fleet: the parent run's child "task" (claim a) starts a fleet
// of two grandchildren. One backs its claim, the other claims a test run
// the host never saw and is lowered; the lead then cites a file only its
// grandchild wrote, which the host upholds because it saw that write.
func TestDepthTwoFleetAdjudicatesEveryLevel(t *testing.T) {
	root, conf := workspace(t)
	write := call("w", "write_file", map[string]any{"path": "a/x/f.txt", "content": "x"})
	k := newKids(map[string][]agenttest.Turn{
		"task": {
			calls(call("f", "fleet", map[string]any{"items": []map[string]any{
				{"id": "g1", "prompt": "write f", "write_paths": []string{"a/x"}},
				{"id": "g2", "prompt": "test it", "write_paths": []string{"a/y"}},
			}})),
			calls(call("c", "complete_subtask", report("complete",
				map[string]any{"criterion": "f exists", "status": "satisfied", "kind": "diff", "paths": []string{"a/x/f.txt"}}))),
			say("lead done"),
		},
		"g1@2": {calls(write), calls(call("c", "complete_subtask", report("complete",
			map[string]any{"criterion": "f written", "status": "satisfied", "kind": "diff", "paths": []string{"a/x/f.txt"}}))), say("g1 done")},
		"g2@2": {calls(call("c", "complete_subtask", report("complete",
			map[string]any{"criterion": "tests pass", "status": "satisfied", "kind": "verification", "commands": []string{"go test ./..."}}))), say("g2 done")},
	})
	k.tools = func(ChildSpec) *agent.ToolRegistry {
		reg := builtinTools(t, root, conf, "write_file", "read_file")
		_ = reg.Add(okBash())
		return reg
	}
	k.gate = allow
	h, ev := newHost(t, k, HostConfig{Workdir: root, Paths: conf, ShellBound: true})
	out, err := taskTool{h: h}.Execute(t.Context(), json.RawMessage(`{"prompt":"lead the work","write_paths":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ": done") || !strings.Contains(out, "status: complete") {
		t.Fatalf("lead result %q", out)
	}
	c := h.Counters()
	if c.SubagentRuns != 3 || c.SubagentNestedRuns != 2 || c.CompletionReports != 3 || c.FalseCompletions != 1 || c.CriterionDowngrades != 1 || c.SubagentMutations != 1 {
		t.Fatalf("counters %+v", c)
	}
	byID := map[string]ChildRecord{}
	for _, r := range h.Records() {
		byID[r.ID] = r
	}
	lead, g1, g2 := byID["task"], byID["g1"], byID["g2"]
	if g2.Depth != 2 || g2.Parent != lead.Ref || g2.Report.Status != "partial" || g2.Report.Claimed != "complete" {
		t.Fatalf("the grandchild's claim was not adjudicated: depth %d parent %q report %+v", g2.Depth, g2.Parent, g2.Report)
	}
	if g1.Report.Status != "complete" || lead.Report.Status != "complete" || lead.Report.Criteria[0].Status != CriterionSatisfied {
		t.Fatalf("backed claims were lowered: g1 %+v lead %+v", g1.Report, lead.Report)
	}
	if g1.Capsule == nil || g1.Capsule.Depth != 2 || g1.Capsule.Parent != lead.Ref || g1.Capsule.Hash() != g1.CapsuleHash || !g1.Capsule.Writer {
		t.Fatalf("stored capsule %+v", g1.Capsule)
	}
	if len(g1.History) == 0 || g1.History[0].Role != agent.RoleUser {
		t.Fatalf("the grandchild's transcript was not kept: %+v", g1.History)
	}
	leadTools, g1Tools := toolNames(k.providers["task"].Requests()[0]), toolNames(k.providers["g1@2"].Requests()[0])
	if !leadTools["task"] || !leadTools["fleet"] || g1Tools["task"] || g1Tools["fleet"] {
		t.Fatalf("depth limit: lead tools %v, grandchild tools %v", leadTools, g1Tools)
	}
	if m := k.firstMessage("task"); !strings.Contains(m, "<subagent-context>") || !strings.Contains(m, "depth 1 of at most 2") || !strings.Contains(m, "inside yours (a)") {
		t.Fatalf("lead's first turn %q", m)
	}
	if m := k.firstMessage("g1@2"); !strings.Contains(m, "depth 2 of at most 2 (started by sub-agent "+lead.Ref+")") || !strings.Contains(m, "you cannot start sub-agents") {
		t.Fatalf("grandchild's first turn %q", m)
	}
	nested := false
	for _, e := range ev.of(EventFleetUpdated) {
		if s := e.Data.(FleetSnapshot); s.Parent == lead.Ref && s.ParentID == "task" && s.Depth == 2 && len(s.Nodes) == 2 {
			nested = true
		}
	}
	if !nested {
		t.Fatal("no fleet snapshot names the nested fleet's parent")
	}
}

func TestNestedWriteClaimMustStayInsideTheParents(t *testing.T) {
	root, conf := workspace(t)
	k := newKids(map[string][]agenttest.Turn{
		"task": {
			calls(call("f", "task", map[string]any{"prompt": "escape", "write_paths": []string{"b"}})),
			calls(call("g", "task", map[string]any{"prompt": "inherit"})),
			say("lead done"),
		},
	})
	k.gate = allow
	h, _ := newHost(t, k, HostConfig{Workdir: root, Paths: conf})
	if _, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"lead","write_paths":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	req := k.providers["task"].Requests()[1]
	if res := req.Messages[len(req.Messages)-1].Content; !strings.Contains(res, "outside this sub-agent's own write claim") {
		t.Fatalf("escaping claim result %q", res)
	}
	if c := h.Counters(); c.WriteScopeViolations != 1 || c.SubagentRuns != 2 {
		t.Fatalf("counters %+v", c)
	}
	var inherited ChildSpec
	for _, s := range k.specs {
		if s.Depth == 2 {
			inherited = s
		}
	}
	if len(inherited.WritePaths) != 1 || inherited.WritePaths[0] != "a" || !inherited.Writer {
		t.Fatalf("a nested item without write_paths got %+v, want the parent's claim", inherited)
	}
}

func TestChildAtMaxDepthCannotDelegate(t *testing.T) {
	k := newKids(nil)
	h, _ := newHost(t, k, HostConfig{MaxDepth: 1})
	if _, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"work"}`)); err != nil {
		t.Fatal(err)
	}
	names := toolNames(k.providers["task"].Requests()[0])
	if names["task"] || names["fleet"] || names["read_subagent_result"] {
		t.Fatalf("a child at max depth 1 has delegation tools: %v", names)
	}
	if strings.Contains(k.firstMessage("task"), "<subagent-context>") {
		t.Fatal("a flat child's first turn carries a <subagent-context>")
	}
}

func TestReadOnlyChildsChildrenOnlyRead(t *testing.T) {
	root, conf := workspace(t)
	k := newKids(map[string][]agenttest.Turn{
		"task": {calls(call("f", "task", map[string]any{"prompt": "look"})), say("looked")},
	})
	k.tools = func(ChildSpec) *agent.ToolRegistry { return builtinTools(t, root, conf, "write_file", "read_file") }
	k.gate = allow
	h, _ := newHost(t, k, HostConfig{Workdir: root, Paths: conf, ReadOnlyProfile: func(p string) bool { return p == "explore" }})
	if _, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"explore","profile":"explore"}`)); err != nil {
		t.Fatal(err)
	}
	var grand ChildSpec
	for _, s := range k.specs {
		if s.Depth == 2 {
			grand = s
		}
	}
	if grand.Writer {
		t.Fatal("a read-only child's sub-agent is a writer")
	}
	names := toolNames(k.providers["task@2"].Requests()[0])
	if names["write_file"] || !names["read_file"] {
		t.Fatalf("a read-only child's sub-agent tools: %v", names)
	}
}

func TestContinueFromResumesAFailedChildsTranscript(t *testing.T) {
	k := newKids(map[string][]agenttest.Turn{
		"task": {calls(call("c", "complete_subtask", report("failed"))), say("could not finish")},
	})
	k.gate = allow
	h, _ := newHost(t, k, HostConfig{})
	out, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"do the thing"}`))
	if err != nil || !strings.Contains(out, ": failed") {
		t.Fatalf("first run %q %v", out, err)
	}
	failed := h.Records()[0]
	if !retryable(failed) {
		t.Fatalf("a failed child is not retryable: %+v", failed)
	}
	if list, _ := (listSubagentsTool{h: h}).Execute(t.Context(), nil); !strings.Contains(list, "retryable=true") {
		t.Fatalf("list_subagents %q", list)
	}
	k.mu.Lock()
	k.scripts["task"] = []agenttest.Turn{calls(call("c", "complete_subtask", report("complete"))), say("finished now")}
	k.mu.Unlock()
	out, err = (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"finish it","continue_from":"`+failed.Ref+`"}`))
	if err != nil || !strings.Contains(out, ": done") || !strings.Contains(out, "finished now") {
		t.Fatalf("continued run %q %v", out, err)
	}
	req := k.providers["task"].Requests()[0]
	if !strings.Contains(req.Messages[1].Content, "do the thing") || !strings.HasPrefix(lastUser(req), "finish it") {
		t.Fatalf("the continued child did not resume the transcript: %+v", req.Messages)
	}
	resumed := h.Records()[1]
	if resumed.Capsule.Resumes != failed.Ref || resumed.Ref == failed.Ref {
		t.Fatalf("capsule %+v", resumed.Capsule)
	}
	// A completed child is forked, never continued; an unknown ref starts nothing.
	for _, bad := range []string{`"continue_from":"` + resumed.Ref + `"`, `"continue_from":"sa-nope"`} {
		if _, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"again",`+bad+`}`)); err == nil {
			t.Fatalf("%s was accepted", bad)
		}
	}
	if _, err := (taskTool{h: h}).Execute(t.Context(), json.RawMessage(`{"prompt":"again","fork_from":"`+resumed.Ref+`"}`)); err != nil {
		t.Fatalf("fork of a completed child: %v", err)
	}
	if n := len(h.Records()); n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
}

func TestAblatedControllerOffersNoDelegation(t *testing.T) {
	k := newKids(nil)
	h, _ := newHost(t, k, HostConfig{})
	p := agenttest.NewScriptedProvider(calls(call("e", "probe", map[string]any{"x": 1})), calls(complete("c", 1)), say("done"))
	cfg := base(t, p)
	cfg.Gate = allow
	c := newController(t, Config{Agent: cfg, Host: h, NoDelegation: true})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "work alone"})
	if err != nil || res.Outcome != StatusComplete {
		t.Fatal(err, res.Outcome)
	}
	names := toolNames(p.Requests()[0])
	if names["task"] || names["fleet"] || !names["probe"] {
		t.Fatalf("the control arm's tools: %v", names)
	}
	if res.Counters.SubagentRuns != 0 || res.Counters.SubagentToolCalls != 0 {
		t.Fatalf("counters %+v", res.Counters)
	}
}
