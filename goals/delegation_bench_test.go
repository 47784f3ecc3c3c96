package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// This file is the delegation measurement of seed §3.17 on scripted tasks:
// each task is played twice by a fake model, once delegating (task/fleet)
// and once as the control arm (NoDelegation), with the same tools and the
// same work. The fake meters every request the way a provider bills it
// (the whole prompt re-sent each call, ~4 bytes a token), so the arms'
// tokens, cost and steps are the structure's, not a guess.
// TestDelegationArms prints the side-by-side table with -v and checks both
// arms finish; BenchmarkDelegationArms reports the same as metrics.

// meter counts the requests and tokens of one arm; safe for concurrent use.
type meter struct {
	mu       sync.Mutex
	steps    int
	prompt   int
	complete int
}

// metered answers with turn, billing req: the prompt is every message and
// tool schema sent, the completion what the turn says and calls.
func (m *meter) metered(turn agenttest.Turn) agenttest.Turn {
	return agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
		n := 0
		for _, msg := range req.Messages {
			n += len(msg.Content)
			for _, c := range msg.ToolCalls {
				n += len(c.Name) + len(c.Arguments)
			}
		}
		for _, s := range req.Tools {
			n += len(s.Name) + len(s.Description) + len(s.Parameters)
		}
		out := len(turn.Text)
		for _, c := range turn.ToolCalls {
			out += len(c.Name) + len(c.Arguments)
		}
		t := turn
		t.Usage = agent.Usage{Prompt: n / 4, Completion: out/4 + 40} // 40: the reasoning a real call spends
		m.mu.Lock()
		m.steps++
		m.prompt += t.Usage.Prompt
		m.complete += t.Usage.Completion
		m.mu.Unlock()
		return t
	})
}

func (m *meter) script(turns ...agenttest.Turn) []agenttest.Turn {
	out := make([]agenttest.Turn, len(turns))
	for i, t := range turns {
		out[i] = m.metered(t)
	}
	return out
}

// benchPrice is a cheap model's list price per million tokens.
func benchPrice(_ string, u agent.Usage) (float64, bool) {
	return (float64(u.Prompt)*0.27 + float64(u.Completion)*1.1) / 1e6, true
}

var (
	benchSystem = "You are a careful coding agent. " + strings.Repeat("Follow the repository's conventions and verify your work. ", 60)
	benchFile   = strings.Repeat("func f() { return } // a line of the module under work\n", 36)
)

// benchTools are the tools both arms work with: reads return a file's
// worth of text, writes and the shell succeed.
func benchTools(tb testing.TB) *agent.ToolRegistry {
	return tools(tb,
		&fakeTool{name: "read_file", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return benchFile, nil }},
		&fakeTool{name: "edit_file", run: func(context.Context, json.RawMessage) (string, error) { return "edited", nil }},
		&fakeTool{name: "bash", run: func(context.Context, json.RawMessage) (string, error) { return "ok\nexit code: 0", nil }})
}

// benchTask is one scripted task: how the parent plays it in each arm, and
// how each child of the delegating arm plays its item.
type benchTask struct {
	name     string
	control  func(m *meter) []agenttest.Turn
	delegate func(m *meter) []agenttest.Turn
	child    func(m *meter, id string) []agenttest.Turn
	readOnly bool // the children are read-only explorers
}

func reads(prefix string, n int) []agent.ToolCall {
	cs := make([]agent.ToolCall, n)
	for i := range cs {
		cs[i] = call(fmt.Sprint("r", i), "read_file", map[string]any{"path": fmt.Sprintf("%s/f%d.go", prefix, i)})
	}
	return cs
}

func fixChild(m *meter, id string) []agenttest.Turn {
	return m.script(
		calls(call("r", "read_file", map[string]any{"path": id + "/m.go"})),
		calls(call("e", "edit_file", map[string]any{"path": id + "/m.go", "old": "return", "new": "return nil"})),
		calls(call("t", "bash", map[string]any{"command": "go test ./" + id})),
		calls(call("c", "complete_subtask", map[string]any{"status": "complete", "summary": "fixed " + id, "acceptance_criteria": []map[string]any{
			{"criterion": "fixed", "status": "satisfied", "kind": "diff", "paths": []string{id + "/m.go"}},
			{"criterion": "tests pass", "status": "satisfied", "kind": "verification", "commands": []string{"go test ./" + id}}}})),
		say("fixed "+id))
}

var benchTasks = []benchTask{
	{
		name: "three-fixes",
		control: func(m *meter) []agenttest.Turn {
			var readAll, editAll []agent.ToolCall
			for _, id := range []string{"a", "b", "c"} {
				readAll = append(readAll, call("r"+id, "read_file", map[string]any{"path": id + "/m.go"}))
				editAll = append(editAll, call("e"+id, "edit_file", map[string]any{"path": id + "/m.go", "old": "return", "new": "return nil"}))
			}
			return m.script(agenttest.Turn{ToolCalls: readAll}, agenttest.Turn{ToolCalls: editAll},
				calls(call("t", "bash", map[string]any{"command": "go test ./..."})), calls(complete("c", 1)), say("done"))
		},
		delegate: func(m *meter) []agenttest.Turn {
			var items []map[string]any
			for _, id := range []string{"a", "b", "c"} {
				items = append(items, map[string]any{"id": id, "prompt": "Fix the one-line bug in " + id + "/m.go and run its tests.", "write_paths": []string{id}})
			}
			return m.script(calls(call("f", "fleet", map[string]any{"items": items})),
				calls(call("t", "bash", map[string]any{"command": "go test ./..."})), calls(complete("c", 1)), say("done"))
		},
		child: fixChild,
	},
	{
		name: "search-24-files",
		control: func(m *meter) []agenttest.Turn {
			return m.script(agenttest.Turn{ToolCalls: reads("x", 8)}, agenttest.Turn{ToolCalls: reads("y", 8)}, agenttest.Turn{ToolCalls: reads("z", 8)},
				calls(complete("c", 1)), say("found it in y/f3.go"))
		},
		delegate: func(m *meter) []agenttest.Turn {
			var items []map[string]any
			for _, id := range []string{"x", "y", "z"} {
				items = append(items, map[string]any{"id": id, "prompt": "Find where the config is parsed under " + id + "/.", "profile": "explore"})
			}
			return m.script(calls(call("f", "fleet", map[string]any{"items": items})), calls(complete("c", 1)), say("found it in y/f3.go"))
		},
		child: func(m *meter, id string) []agenttest.Turn {
			return m.script(agenttest.Turn{ToolCalls: reads(id, 8)}, say("looked through "+id))
		},
		readOnly: true,
	},
	{
		name: "branches-with-edges",
		control: func(m *meter) []agenttest.Turn {
			return m.script(calls(call("r", "read_file", map[string]any{"path": "a/m.go"})),
				calls(call("e1", "edit_file", map[string]any{"path": "a/m.go", "old": "x", "new": "y"}), call("e2", "edit_file", map[string]any{"path": "b/m.go", "old": "x", "new": "y"})),
				calls(call("t", "bash", map[string]any{"command": "go test ./..."})), calls(complete("c", 1)), say("done"))
		},
		delegate: func(m *meter) []agenttest.Turn {
			items := []map[string]any{
				{"id": "a", "prompt": "Change the API in a/m.go and run its tests.", "write_paths": []string{"a"}},
				{"id": "b", "prompt": "Adapt b/m.go to the new API and run its tests.", "write_paths": []string{"b"}, "depends_on": []string{"a"}},
			}
			return m.script(calls(call("f", "fleet", map[string]any{"items": items})),
				calls(call("t", "bash", map[string]any{"command": "go test ./..."})), calls(complete("c", 1)), say("done"))
		},
		child: fixChild,
	},
}

// armResult is one arm of one task.
type armResult struct {
	outcome  Status
	steps    int
	tokens   int
	usd      float64
	counters Counters
}

func runArm(tb testing.TB, task benchTask, delegate bool) armResult {
	m := &meter{}
	factory := ChildFactoryFunc(func(_ context.Context, spec ChildSpec) (agent.Config, error) {
		return agent.Config{Provider: agenttest.NewScriptedProvider(task.child(m, spec.ID)...), Tools: benchTools(tb),
			SystemPrompt: benchSystem, Gate: allow}, nil
	})
	h, err := NewHost(HostConfig{Factory: factory, Workdir: tb.TempDir(), Price: benchPrice, ShellBound: true,
		ReadOnlyProfile: func(p string) bool { return task.readOnly && p == "explore" }})
	if err != nil {
		tb.Fatal(err)
	}
	script := task.control(m)
	if delegate {
		script = task.delegate(m)
	}
	c, err := New(Config{Agent: agent.Config{Provider: agenttest.NewScriptedProvider(script...), Tools: benchTools(tb), SystemPrompt: benchSystem, Gate: allow},
		Host: h, NoDelegation: !delegate, Price: benchPrice})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := c.Run(context.Background(), Goal{ID: "g1", Objective: "Do the scripted task " + task.name + "."})
	if err != nil {
		tb.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return armResult{outcome: res.Outcome, steps: m.steps, tokens: m.prompt + m.complete, usd: res.State.Cost, counters: res.Counters}
}

func TestDelegationArms(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "%-20s %-9s %-8s %5s %7s %9s %5s %5s\n", "task", "arm", "outcome", "steps", "tokens", "usd", "runs", "false")
	for _, task := range benchTasks {
		ctl, del := runArm(t, task, false), runArm(t, task, true)
		for _, a := range []struct {
			arm string
			r   armResult
		}{{"control", ctl}, {"delegate", del}} {
			fmt.Fprintf(&table, "%-20s %-9s %-8s %5d %7d %9.6f %5d %5d\n", task.name, a.arm, a.r.outcome, a.r.steps, a.r.tokens, a.r.usd,
				a.r.counters.SubagentRuns, a.r.counters.FalseCompletions)
		}
		if ctl.outcome != StatusComplete || del.outcome != StatusComplete {
			t.Errorf("%s: outcomes %s / %s", task.name, ctl.outcome, del.outcome)
		}
		if ctl.counters.SubagentRuns != 0 || del.counters.SubagentRuns < 2 || del.counters.FalseCompletions != 0 {
			t.Errorf("%s: control ran %d sub-agents, delegation %d (%d false)", task.name, ctl.counters.SubagentRuns, del.counters.SubagentRuns, del.counters.FalseCompletions)
		}
		if !(ctl.usd > 0) || !(del.usd > 0) {
			t.Errorf("%s: unpriced arm: %v / %v", task.name, ctl.usd, del.usd)
		}
	}
	t.Logf("delegation arms (fake model, metered requests):\n%s", table.String())
}

// BenchmarkDelegationArms reports each arm's tokens, cost, steps and
// outcome (1 = complete) per run of each scripted task.
func BenchmarkDelegationArms(b *testing.B) {
	for _, task := range benchTasks {
		for _, delegate := range []bool{false, true} {
			arm := map[bool]string{false: "control", true: "delegate"}[delegate]
			b.Run(task.name+"/"+arm, func(b *testing.B) {
				var r armResult
				for b.Loop() {
					r = runArm(b, task, delegate)
				}
				b.ReportMetric(float64(r.tokens), "tokens")
				b.ReportMetric(r.usd*1e6, "µusd")
				b.ReportMetric(float64(r.steps), "steps")
				b.ReportMetric(float64(r.counters.SubagentRuns), "subagent_runs")
				b.ReportMetric(map[bool]float64{true: 1}[r.outcome == StatusComplete], "complete")
			})
		}
	}
}
