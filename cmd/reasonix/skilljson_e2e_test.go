package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// skillJSON is the part of run --json these tests read.
type skillJSON struct {
	Status       string      `json:"status"`
	Steps        int         `json:"steps"`
	ToolCalls    int         `json:"tool_calls"`
	Tokens       agent.Usage `json:"tokens"`
	Ablate       string      `json:"ablate"`
	SubagentRuns int         `json:"subagent_runs"`
	Counters     map[string]any
}

func runSkillJSON(t *testing.T, e *e2e, args ...string) skillJSON {
	t.Helper()
	stdout, stderr, code := e.run(append([]string{"run", "--auto", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res skillJSON
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if err := json.Unmarshal([]byte(stdout), &res.Counters); err != nil {
		t.Fatal(err)
	}
	return res
}

// A plain run's --json counts a run_skill sub-agent's request, tokens and
// calls in its totals and reports the ten delegation counters, as a goal
// run does.
func TestRunJSONCountsTheSkillChild(t *testing.T) {
	withUsage := func(turn agenttest.Turn, u agent.Usage) agenttest.Turn { turn.Usage = u; return turn }
	e := newE2E(t,
		withUsage(toolTurn(call("s1", "run_skill", `{"name":"helper","arguments":"look at the README"}`)), agent.Usage{Prompt: 100, Completion: 10}),
		withUsage(toolTurn(call("c1", "ls", `{}`)), agent.Usage{Prompt: 1000, Completion: 20}),
		withUsage(answer("README looked at"), agent.Usage{Prompt: 2000, Completion: 200}),
		withUsage(answer("The helper looked."), agent.Usage{Prompt: 300, Completion: 30}),
	)
	writeFile(t, filepath.Join(e.work, ".reasonix", "skills", "helper.md"), "---\ndescription: Looks into one thing.\nrunAs: subagent\n---\nYou are the helper.")
	res := runSkillJSON(t, e, "use the helper skill")
	if res.Status != "succeeded" || res.Steps != 4 || res.ToolCalls != 2 {
		t.Errorf("steps %d, tool calls %d (want 4 and 2: the child's included); %+v", res.Steps, res.ToolCalls, res)
	}
	if want := (agent.Usage{Prompt: 3400, Completion: 260}); res.Tokens.Prompt != want.Prompt || res.Tokens.Completion != want.Completion {
		t.Errorf("tokens = %+v, want %+v with the child's", res.Tokens, want)
	}
	if res.SubagentRuns != 1 || res.Counters["subagent_tool_calls"] != float64(1) {
		t.Errorf("counters = %v", res.Counters)
	}
	for _, k := range []string{"subagent_nested_runs", "subagent_mutations", "duplicate_work_paths", "completion_reports",
		"completions_prose_only", "false_completions", "criterion_downgrades", "write_scope_violations"} {
		if _, ok := res.Counters[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
}

// --ablate subagent on a plain run: run_skill refuses the sub-agent skill
// (no child request), the run goes on alone and says which arm it was.
func TestRunAblateRefusesSubagentSkill(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("s1", "run_skill", `{"name":"helper","arguments":"look at the README"}`)),
		answer("I looked myself."),
	)
	writeFile(t, filepath.Join(e.work, ".reasonix", "skills", "helper.md"), "---\ndescription: Looks into one thing.\nrunAs: subagent\n---\nYou are the helper.")
	res := runSkillJSON(t, e, "--ablate", "subagent", "use the helper skill")
	if res.Ablate != "subagent" || res.SubagentRuns != 0 || res.Steps != 2 {
		t.Errorf("result = %+v", res)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (no child)", len(reqs))
	}
	msgs := reqs[1].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "--ablate subagent") {
		t.Errorf("run_skill answered %q", got)
	}
}
