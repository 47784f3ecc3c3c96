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
