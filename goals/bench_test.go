package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// instant is a ChildFactory whose children answer at once, so a fleet
// measures the host's own scheduling overhead.
var instant = ChildFactoryFunc(func(context.Context, ChildSpec) (agent.Config, error) {
	return agent.Config{Provider: agenttest.NewScriptedProvider(say("ok"))}, nil
})

func chain(n int) FleetSpec {
	var spec FleetSpec
	for i := range n {
		it := FleetItem{ID: fmt.Sprint("n", i), Prompt: "p", WritePaths: []string{fmt.Sprint("d", i)}}
		if i > 0 {
			// A layered graph: every item depends on up to two earlier ones.
			it.DependsOn = append(it.DependsOn, fmt.Sprint("n", (i-1)/2))
			if (i-1)/2 != i-1 {
				it.DependsOn = append(it.DependsOn, fmt.Sprint("n", i-1))
			}
		}
		spec.Items = append(spec.Items, it)
	}
	return spec
}

// BenchmarkFleetNode reports the host's overhead per node for a 64-node
// graph of instant children (building, binding, running and recording the
// child, the upstream block, events).
func BenchmarkFleetNode(b *testing.B) {
	h, err := NewHost(HostConfig{Factory: instant, Workdir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	g, err := Preflight(chain(64))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := h.RunFleet(context.Background(), g)
		if err != nil || res.Answered != 64 {
			b.Fatal(err, res.Answered)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/node")
}

// BenchmarkPreflight64 parses and preflights a 64-node graph from JSON.
func BenchmarkPreflight64(b *testing.B) {
	raw, err := json.Marshal(chain(64))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFleet(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchmarkGraphIsValid(t *testing.T) {
	g, err := Preflight(chain(64))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Deps(63)) != 2 || !strings.HasPrefix(g.Items[63].DependsOn[0], "n") {
		t.Fatalf("deps %v", g.Items[63].DependsOn)
	}
}

// BenchmarkFleetDepth compares the host's overhead per child of a flat
// fleet (8 instant children) with a depth-2 fleet (2 leads that each run a
// fleet of 4 instant children: 10 child runs). Each lead's own model turn
// is as instant as the rest, so ns/child is the host's work: building,
// binding (the leads' nested tools and <subagent-context>), scheduling,
// recording and the claim checks one level down.
func BenchmarkFleetDepth(b *testing.B) {
	// Each lead splits its own claim four ways.
	nestedFleet := func(root string) map[string]any {
		var items []map[string]any
		for _, d := range []string{"a", "b", "c", "d"} {
			items = append(items, map[string]any{"id": "g" + d, "prompt": "p", "write_paths": []string{root + "/" + d}})
		}
		return map[string]any{"items": items}
	}
	factory := ChildFactoryFunc(func(_ context.Context, spec ChildSpec) (agent.Config, error) {
		if spec.Depth == 1 && strings.HasPrefix(spec.ID, "lead") {
			return agent.Config{Provider: agenttest.NewScriptedProvider(calls(call("f", "fleet", nestedFleet(spec.WritePaths[0]))), say("ok")), Gate: allow}, nil
		}
		return agent.Config{Provider: agenttest.NewScriptedProvider(say("ok"))}, nil
	})
	flat := FleetSpec{}
	for i := range 8 {
		flat.Items = append(flat.Items, FleetItem{ID: fmt.Sprint("n", i), Prompt: "p", WritePaths: []string{fmt.Sprint("d", i)}})
	}
	deep := FleetSpec{Items: []FleetItem{{ID: "lead1", Prompt: "p", WritePaths: []string{"l"}}, {ID: "lead2", Prompt: "p", WritePaths: []string{"m"}}}}
	for _, tc := range []struct {
		name     string
		spec     FleetSpec
		children int
	}{{"depth1", flat, 8}, {"depth2", deep, 10}} {
		b.Run(tc.name, func(b *testing.B) {
			h, err := NewHost(HostConfig{Factory: factory, Workdir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			g, err := Preflight(tc.spec)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			before := h.Counters().SubagentRuns
			for b.Loop() {
				if res, err := h.RunFleet(context.Background(), g); err != nil || res.Answered != len(tc.spec.Items) {
					b.Fatal(err, res)
				}
			}
			if runs := h.Counters().SubagentRuns - before; runs != tc.children*b.N {
				b.Fatalf("%d child runs, want %d", runs, tc.children*b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tc.children), "ns/child")
		})
	}
}
