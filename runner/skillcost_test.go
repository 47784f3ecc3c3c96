package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// skillCostSettings is pricedSettings with a [skills] paths root holding
// the sub-agent skill "helper".
func skillCostSettings(t *testing.T) *config.Config {
	t.Helper()
	root := t.TempDir()
	skill := "---\ndescription: Looks into one thing.\nrunAs: subagent\n---\nYou are the helper. Answer in one line.\n"
	if err := os.WriteFile(filepath.Join(root, "helper.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	set := pricedSettings()
	set.Skills = config.Skills{Paths: []string{root}}
	return set
}

// The prices of pricedSettings' "big" (2 in, 10 out per million): the
// parent's run_skill turn, its answer, and the skill's child.
const (
	skillParentCost = (1000*2 + 100*10 + 100*2 + 10*10) / 1e6
	skillChildCost  = (2000*2 + 200*10) / 1e6
)

// checkSkillChildCounted asserts that the run_skill child of task counted
// as a task tool child does: its model call in the task's cost and tokens,
// its usage event tagged with its ref, its subagent_started/finished
// events (the finished one with its cost), and the delegation metric.
func checkSkillChildCounted(t *testing.T, svc *runner.Service, task store.Task) {
	t.Helper()
	res := task.Result
	if !near(res.Cost, skillParentCost+skillChildCost) {
		t.Errorf("task cost = %v, want %v (parent %v + the skill's child %v)", res.Cost, skillParentCost+skillChildCost, skillParentCost, skillChildCost)
	}
	if big := res.Models["fake/big"]; big.Calls != 3 || big.Tokens.Prompt != 3100 || big.Tokens.Completion != 310 {
		t.Errorf("by model = %+v, want 3 calls, 3100 prompt and 310 completion tokens", big)
	}
	var ref string
	for _, e := range runnertest.Events(t, svc, task.ID, "subagent_started") {
		if p := payload(t, e); p["id"] == "skill:helper" {
			ref, _ = p["ref"].(string)
		}
	}
	if ref == "" {
		t.Fatal("no subagent_started event for the skill's child")
	}
	var childUsage bool
	for _, e := range runnertest.Events(t, svc, task.ID, "usage") {
		if p := payload(t, e); p["subagent"] == ref && p["prompt"] == float64(2000) {
			childUsage = near(p["cost"].(float64), skillChildCost)
		}
	}
	if !childUsage {
		t.Error("no priced usage event of the skill's child")
	}
	var finished bool
	for _, e := range runnertest.Events(t, svc, task.ID, "subagent_finished") {
		if p := payload(t, e); p["ref"] == ref {
			c, _ := p["cost"].(float64)
			finished = near(c, skillChildCost) && p["state"] == "done"
		}
	}
	if !finished {
		t.Error("no subagent_finished event with the child's cost")
	}
	if line := fmt.Sprintf("reasonix_delegation_total{counter=%q} 1\n", "subagent_runs"); !strings.Contains(scrape(t, svc), line) {
		t.Errorf("metrics lack %q", line)
	}
	// The counters are the task's too: its result and its final report.
	if d := res.Delegation; d == nil || d.SubagentRuns != 1 || d.SubagentNestedRuns != 0 {
		t.Errorf("result delegation = %+v, want 1 sub-agent run", d)
	}
	if c, _ := finalReport(t, svc, task.ID)["counters"].(map[string]any); c["subagent_runs"] != float64(1) || len(c) != 10 {
		t.Errorf("final report counters = %v", c)
	}
}

// TestPlainTaskDelegationAddsUpOverRuns: a plain task's counters are
// summed over its runs: a continuation's run_skill child adds to the
// first run's, and a task that started none shows zeros, not nothing.
func TestPlainTaskDelegationAddsUpOverRuns(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	rt.script("use the helper skill twice",
		calls(call("s1", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"})),
		answer("The helper looked."),
		calls(call("s2", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"})),
		answer("It looked again."))
	rt.script("child: look at the README", answer("README looked at"), answer("README looked at again"))
	rt.script("say hello", answer("hello"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: skillCostSettings(t), Configure: pricedModels(rt)})
	task, _, err := svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice",
		Prompt: "use the helper skill twice", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	first := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if d := first.Result.Delegation; first.State != store.StateSucceeded || d == nil || d.SubagentRuns != 1 {
		t.Fatalf("first run: %s %+v", first.State, first.Result)
	}
	if _, err := svc.Message(t.Context(), task.ID, runner.Principal{ID: "api:alice", Role: store.RoleSubmit}, "once more"); err != nil {
		t.Fatal(err)
	}
	var done store.Task
	eventually.True(t, 0, func() bool {
		done, _ = svc.Task(t.Context(), task.ID)
		return done.Attempt > first.Attempt && done.State != store.StateQueued && done.State != store.StateRunning
	}, "the continuation did not end")
	if d := done.Result.Delegation; done.State != store.StateSucceeded || done.Result.FinalAnswer != "It looked again." || d == nil || d.SubagentRuns != 2 {
		t.Fatalf("after the continuation: %s %+v delegation %+v", done.State, done.Result, done.Result.Delegation)
	}

	plain, _, err := svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice", Prompt: "say hello", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	end := runnertest.WaitState(t, svc, plain.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if d := end.Result.Delegation; d == nil || *d != (goals.Counters{}) {
		t.Fatalf("a task without sub-agents: delegation %+v", d)
	}
}

// TestAblatedTaskRunsNoSubagentSkill: the control arm of --ablate
// subagent delegates through nothing, run_skill included: a plain task's
// and a goal's run_skill of a sub-agent skill is refused with a reason,
// no child model call is made and subagent_runs stays 0.
func TestAblatedTaskRunsNoSubagentSkill(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	plainParent := rt.script("use the helper skill, ablated",
		calls(call("s1", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"})),
		answer("I looked myself."))
	goalParent := rt.script("Objective: use the helper skill in a goal, ablated",
		append([]agenttest.Turn{calls(call("g1", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"}))},
			endGoal("complete", map[string]any{"summary": "Looked myself."}, "Done.", nil)...)...)
	child := rt.script("child: look at the README", answer("README looked at"))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: skillCostSettings(t), Configure: pricedModels(rt)})
	task, _, err := svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice",
		Prompt: "use the helper skill, ablated", Posture: "auto", Ablate: store.AblateSubagent})
	if err != nil {
		t.Fatal(err)
	}
	goal := submitGoal(t, svc, runner.TaskRequest{Prompt: "use the helper skill in a goal, ablated", Goal: true, Posture: "auto", Ablate: store.AblateSubagent})
	for _, c := range []struct {
		id     string
		parent *agenttest.ScriptedProvider
		call   string
	}{{task.ID, plainParent, "s1"}, {goal.ID, goalParent, "g1"}} {
		done := runnertest.WaitState(t, svc, c.id, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
		if done.State != store.StateSucceeded {
			t.Fatalf("task = %s %+v", done.State, done.Result)
		}
		if got := toolResult(c.parent, c.call); !strings.Contains(got, "--ablate subagent") {
			t.Errorf("run_skill in the control arm answered %q", got)
		}
		if d := done.Result.Delegation; d == nil || d.SubagentRuns != 0 {
			t.Errorf("control arm delegation = %+v", d)
		}
	}
	if n := len(child.Requests()); n != 0 {
		t.Fatalf("the sub-agent skill's model was asked %d times in the control arm", n)
	}
}

// TestRunSkillChildCountsInPlainTask: a plain task's run_skill of a
// sub-agent skill runs a child whose spend, tokens and steps are the
// task's, as a task tool child's are.
func TestRunSkillChildCountsInPlainTask(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	parent := rt.script("use the helper skill",
		withUsage(calls(call("s1", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"})),
			agent.Usage{Prompt: 1000, Completion: 100}),
		answer("The helper looked."))
	rt.script("child: look at the README", withUsage(answer("README looked at"), agent.Usage{Prompt: 2000, Completion: 200}))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: skillCostSettings(t), Configure: pricedModels(rt)})
	task, _, err := svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice",
		Prompt: "use the helper skill", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if got := toolResult(parent, "s1"); !strings.Contains(got, "README looked at") {
		t.Fatalf("run_skill result = %q", got)
	}
	checkSkillChildCounted(t, svc, done)
}

// TestRunSkillChildCountsInGoal: in a goal, the skill's child is the
// goal's host's child: its cost is in the goal's (and so its slice
// budget's), its record and counters are the goal's.
func TestRunSkillChildCountsInGoal(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	rt.script("Objective: use the helper skill",
		append([]agenttest.Turn{withUsage(calls(call("s1", "run_skill", map[string]any{"name": "helper", "arguments": "child: look at the README"})),
			agent.Usage{Prompt: 1000, Completion: 100})},
			endGoal("complete", map[string]any{"summary": "Looked."}, "Done.", nil)...)...)
	rt.script("child: look at the README", withUsage(answer("README looked at"), agent.Usage{Prompt: 2000, Completion: 200}))
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt, Settings: skillCostSettings(t), Configure: pricedModels(rt)})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "use the helper skill", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	// The goal's get_goal and update_goal turns report no usage; its
	// answer is the plain task's.
	goalCost := skillParentCost + skillChildCost
	rep := finalReport(t, svc, task.ID)
	goal, _ := rep["goal"].(map[string]any)
	if c, _ := goal["cost"].(float64); !near(c, goalCost) {
		t.Fatalf("goal cost = %v, want %v with the skill's child", goal["cost"], goalCost)
	}
	if counters, _ := goal["counters"].(map[string]any); counters["subagent_runs"] != float64(1) {
		t.Fatalf("goal counters = %v", counters)
	}
	if _, children := goalDoc(t, st, task.ID); len(children) != 1 || children[0]["id"] != "skill:helper" {
		t.Fatalf("the goal's children = %v", children)
	}
	checkSkillChildCounted(t, svc, done)
}

// TestGoalSliceBudgetWarning: a goal's slice crossing [runner]
// budget_warn of its turn budget leaves one budget_warning event (scope
// goal_slice) in the task's log, which the chat relay posts.
func TestGoalSliceBudgetWarning(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	rt.script("Objective: count slowly", answer("one"), answer("two"))
	set := settings(2)
	set.Agent.GoalMaxTurns = 2
	set.Runner.BudgetWarn = 0.5
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "count slowly", Goal: true, Posture: "auto"})
	runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	evs := runnertest.Events(t, svc, task.ID, "budget_warning")
	if len(evs) != 1 {
		t.Fatalf("%d budget_warning events", len(evs))
	}
	if p := payload(t, evs[0]); p["budget"] != "turns" || p["scope"] != "goal_slice" || p["spent"] != float64(1) || p["limit"] != float64(2) {
		t.Fatalf("budget_warning = %v", p)
	}
}
