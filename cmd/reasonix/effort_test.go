package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/session"
)

// TestEffortReachesEachWire: a provider's configured effort travels from
// the configuration through the session's model to each wire's own field —
// Chat Completions reasoning_effort, Responses reasoning.effort, Anthropic
// thinking.budget_tokens — and every usage event names it.
func TestEffortReachesEachWire(t *testing.T) {
	cases := []struct {
		kind, effort string
		check        func(agenttest.Request) bool
	}{
		{"openai", "medium", func(r agenttest.Request) bool { return r.Effort == "medium" }},
		{"openai", "max", func(r agenttest.Request) bool { return r.Effort == "high" }}, // the API's highest
		{"responses", "low", func(r agenttest.Request) bool { return r.Effort == "low" }},
		{"anthropic", "high", func(r agenttest.Request) bool { return r.ThinkingBudget == 16384 && r.MaxTokens > 16384 }},
		{"anthropic", "", func(r agenttest.Request) bool { return r.ThinkingBudget == 0 }},
		{"openai", "", func(r agenttest.Request) bool {
			return r.Effort == "" && !strings.Contains(string(r.Body), "reasoning_effort")
		}},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.effort, func(t *testing.T) {
			srv := agenttest.NewServerFor(t, c.kind, agenttest.Turn{Text: "ok", Usage: agent.Usage{Prompt: 10, Completion: 2}})
			t.Setenv("RX_EFFORT_KEY", "k")
			f := t.TempDir() + "/reasonix.toml"
			writeFile(t, f, fmt.Sprintf("[[providers]]\nname = \"p\"\nkind = %q\nbase_url = %q\nmodel = \"m\"\napi_key_env = \"RX_EFFORT_KEY\"\neffort = %q\n",
				c.kind, srv.URL, c.effort))
			cfg, err := config.Load(config.LoadOptions{File: f, Home: t.TempDir(), ProjectDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			m, err := session.ResolveModel(cfg, "")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var usage []agent.Event
			a, err := agent.New(agent.Config{Provider: m.Provider, Model: m.Name, MaxTokens: m.MaxTokens, Effort: m.Effort,
				Observer: func(e agent.Event) {
					if e.Type == agent.EventUsage {
						mu.Lock()
						usage = append(usage, e)
						mu.Unlock()
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			if res := a.Run(t.Context(), "hi"); res.Err != nil {
				t.Fatal(res.Err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || !c.check(reqs[0]) {
				t.Fatalf("request on the wire: effort %q thinking %d max_tokens %d\n%s", reqs[0].Effort, reqs[0].ThinkingBudget, reqs[0].MaxTokens, reqs[0].Body)
			}
			if len(usage) != 1 || usage[0].Effort != c.effort {
				t.Errorf("usage events %+v, want effort %q", usage, c.effort)
			}
		})
	}
}

// TestRunSubagentEffortPrecedence: a goal's sub-agents take their effort by
// the seed's precedence — the call's effort over [agent] subagent_effort,
// which wins over the provider's — and the parent keeps the provider's.
func TestRunSubagentEffortPrecedence(t *testing.T) {
	var mu sync.Mutex
	efforts := map[string]string{}
	e := newE2E(t, goalScript(14, func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[0].Content, "sub-agent") {
			last := req.Messages[len(req.Messages)-1].Content
			mu.Lock()
			defer mu.Unlock()
			for _, k := range []string{"alpha", "beta"} {
				if strings.Contains(last, "look at "+k) {
					efforts[k] = req.Effort
				}
			}
			return answer("child answered")
		}
		mu.Lock()
		efforts["parent"] = req.Effort
		mu.Unlock()
		switch res := lastToolResult(req); {
		case strings.Contains(res, "Goal completed") || strings.Contains(res, "complete"):
			return answer("fleet done")
		case strings.Contains(res, "tasks answered"):
			id, rev := goalRef(t, req)
			return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"both children answered"}`, id, rev)))
		default:
			return toolTurn(call("g1", "fleet", `{"items":[{"id":"a","prompt":"look at alpha","effort":"max"},{"id":"b","prompt":"look at beta"}]}`))
		}
	})...)
	e.configure("effort = \"low\"\n[agent]\nsubagent_effort = \"medium\"\n")
	stdout, stderr, code := e.run("run", "--goal", "--auto", "delegate")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	// On the openai wire max is sent as the API's highest, high.
	if efforts["alpha"] != "high" || efforts["beta"] != "medium" || efforts["parent"] != "low" {
		t.Fatalf("efforts on the wire: %v", efforts)
	}
}
