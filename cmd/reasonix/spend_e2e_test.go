package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner/store/storetest"
)

// TestKilledNodeSpendCounts: the node running a priced task is killed
// with SIGKILL after a few calls; the other node takes the task over and
// finishes it. The task's cost covers every call the model answered — the
// dead run's too — except at most the one the kill cut off mid-answer.
func TestKilledNodeSpendCounts(t *testing.T) {
	const staleAfter = 3 * time.Second
	const perCallUSD = (1000*1.0 + 100*2.0) / 1e6 // fake-model's prices in pricedConfig
	var mu sync.Mutex
	asked := 0
	steps := stepper(map[string]int{"long": 10}, thinkTime)
	model := func(req agenttest.Request) agenttest.Turn {
		mu.Lock()
		asked++
		mu.Unlock()
		turn := steps(req)
		turn.Usage = agent.Usage{Prompt: 1000, Completion: 100}
		return turn
	}
	dsn := storetest.PostgresDSN(t)
	first := newE2E(t, goalScript(200, model)...)
	nodes := []*e2e{first, {t: t, home: t.TempDir(), work: t.TempDir(), srv: first.srv}}
	live := make([]*service, len(nodes))
	for i, e := range nodes {
		e.pricedConfig(fmt.Sprintf("\n[store]\ndriver = \"postgres\"\ndsn_env = \"RX_TEST_DSN\"\n\n[serve]\nstale_after = %q\n", staleAfter.String()))
		live[i] = e.serve(t, "RX_TEST_DSN="+dsn)
	}
	id := live[0].submit("long priced", map[string]any{"posture": "auto"})
	var ranOn string
	live[0].waitFor(func() bool {
		evs := live[0].events(id)
		for n := range nodesOf(evs) {
			ranOn = n
		}
		return ranOn != "" && strings.Count(evs, `"type":"usage"`) >= 3
	}, "the task to make a few priced calls")
	victim := 0
	if ranOn == (&cluster{t: t, nodes: nodes}).nodeID(1) {
		victim = 1
	}
	live[victim].cmd.Process.Kill()
	<-live[victim].done
	survivor := live[1-victim]
	got := survivor.waitState(id, "succeeded", "failed", "interrupted", "cancelled")
	if got.State != "succeeded" || got.Result == nil {
		t.Fatalf("after the kill: %+v\n%s", got, survivor.events(id))
	}
	mu.Lock()
	made := asked
	mu.Unlock()
	counted := got.Result.Tokens.Prompt / 1000
	if counted < made-1 || counted > made || got.Result.Tokens.Completion != counted*100 ||
		!nearly(got.Result.Cost, float64(counted)*perCallUSD) {
		t.Fatalf("the model answered %d calls (one may have been cut by the kill); the task counts %d: %+v", made, counted, got.Result)
	}
	t.Logf("model calls %d, counted in the task's cost %d", made, counted)
}
