package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/store/storetest"
)

// Two `reasonix serve` processes share one Postgres database: every task
// runs exactly once, and a decision taken on one node resumes the task
// wherever it runs.
func TestServeTwoNodesSharePostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	const n = 12
	var mu sync.Mutex
	asked := map[string]int{}
	turns := goalScript(4*n, func(req agenttest.Request) agenttest.Turn {
		prompt := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				prompt = m.Content
				break
			}
		}
		if strings.HasPrefix(prompt, "needs approval") {
			if res := lastToolResult(req); res != "" {
				return answer("approved: " + res)
			}
			return toolTurn(call("a", "bash", `{"command":"echo from-either-node > out.txt && cat out.txt"}`))
		}
		mu.Lock()
		asked[prompt]++
		mu.Unlock()
		return answer("done: " + prompt)
	})
	a := newE2E(t, turns...)
	b := &e2e{t: t, home: t.TempDir(), work: t.TempDir(), srv: a.srv}
	for _, e := range []*e2e{a, b} {
		e.configure("\n[store]\ndriver = \"postgres\"\ndsn_env = \"RX_TEST_DSN\"\n")
	}
	na := a.serve(t, "RX_TEST_DSN="+dsn)
	nb := b.serve(t, "RX_TEST_DSN="+dsn)

	var ids []string
	for i := range n {
		node := na
		if i%2 == 1 {
			node = nb
		}
		ids = append(ids, node.submit(fmt.Sprintf("task number %d", i), nil))
	}
	approval := na.submit("needs approval on any node", nil)
	for _, id := range ids {
		if got := na.waitState(id, "succeeded", "failed"); got.State != "succeeded" {
			t.Fatalf("task %s = %+v", id, got)
		}
	}
	mu.Lock()
	for i := range n {
		if c := asked[fmt.Sprintf("task number %d", i)]; c != 1 {
			t.Errorf("task number %d ran %d times", i, c)
		}
	}
	mu.Unlock()

	// Both nodes see the same approval; deciding it on node B resumes the task.
	na.waitState(approval, "waiting_approval")
	aps := nb.pending(approval)
	if len(aps) != 1 {
		t.Fatalf("node B sees approvals %+v", aps)
	}
	if code := nb.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, nil); code != 200 {
		t.Fatalf("decide on node B: %d", code)
	}
	got := na.waitState(approval, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "from-either-node") {
		t.Fatalf("approval task = %+v", got)
	}
}
