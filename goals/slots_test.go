package goals

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"reasonix/agent/agenttest"
)

// TestNestedFleetsShareTheConcurrencyBound: three leads each start a
// fleet of three; with max_subagent_concurrency 2 no more than two
// sub-agents work at any time in the whole tree (not 2 per fleet, 4 or
// more here), the leads give their places up while they wait for their
// own children (so the tree cannot deadlock), and all twelve finish.
func TestNestedFleetsShareTheConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		active, most := 0, 0
		work := func(name string) []agenttest.Turn {
			return []agenttest.Turn{agenttest.Respond(func(agenttest.Request) agenttest.Turn {
				mu.Lock()
				active++
				most = max(most, active)
				mu.Unlock()
				<-release
				mu.Lock()
				active--
				mu.Unlock()
				return say(name + " done")
			})}
		}
		scripts := map[string][]agenttest.Turn{}
		var leads []map[string]any
		for l := 1; l <= 3; l++ {
			lead := fmt.Sprintf("l%d", l)
			var items []map[string]any
			for g := 1; g <= 3; g++ {
				id := fmt.Sprintf("%sg%d", lead, g)
				items = append(items, map[string]any{"id": id, "prompt": "work " + id, "write_paths": []string{lead + "/" + id}})
				scripts[id+"@2"] = work(id)
			}
			scripts[lead] = []agenttest.Turn{calls(call("f", "fleet", map[string]any{"items": items})), say(lead + " done")}
			leads = append(leads, map[string]any{"id": lead, "prompt": "lead " + lead, "write_paths": []string{lead}})
		}
		k := newKids(scripts)
		k.gate = allow
		h, _ := newHost(t, k, HostConfig{MaxConcurrency: 2})
		spec, err := json.Marshal(map[string]any{"items": leads})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan FleetResult, 1)
		go func() {
			res, err := h.RunFleet(t.Context(), mustGraph(t, string(spec)))
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		synctest.Wait() // everyone is working or waiting for a place
		mu.Lock()
		working := active
		mu.Unlock()
		if working != 2 {
			t.Errorf("%d sub-agents work at once, want 2: the bound is the tree's and waiting leads give their places up", working)
		}
		close(release)
		res := <-done
		if res.Answered != 3 {
			t.Fatalf("answered %d: %+v", res.Answered, res.Nodes)
		}
		if most > 2 {
			t.Errorf("%d sub-agents worked at once, want at most 2", most)
		}
		if c := h.Counters(); c.SubagentRuns != 12 || c.SubagentNestedRuns != 9 {
			t.Errorf("counters %+v", c)
		}
		if len(h.slots) != 0 {
			t.Errorf("%d places still held after the fleet", len(h.slots))
		}
	})
}
