package goals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin" // todo_write
)

// base is the agent config of controller tests: a scripted provider, the
// probe tool, the real todo_write, and a fixed system prompt.
func base(t *testing.T, p *agenttest.ScriptedProvider, extra ...agent.Tool) agent.Config {
	t.Helper()
	reg := tools(t, append([]agent.Tool{echo()}, extra...)...)
	if err := reg.AddBuiltins(agent.ToolEnv{Workdir: t.TempDir()}, []string{"todo_write"}); err != nil {
		t.Fatal(err)
	}
	return agent.Config{Provider: p, Tools: reg, SystemPrompt: "stable system prompt"}
}

func newController(t *testing.T, cfg Config) *Controller {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func complete(id string, rev int) agent.ToolCall {
	return call("c"+id, "update_goal", map[string]any{"goal_id": "g1", "revision": rev, "action": "complete", "summary": "all done"})
}

func TestCompleteStopsTheGoalAndKeepsTheGoalBlockOutOfTheSystemPrompt(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(call("1", "probe", map[string]any{"q": 1})),
		calls(complete("1", 1)),
		say("finished: the answer is 42"),
	)
	store := &memStore{}
	c := newController(t, Config{Agent: base(t, p), Store: store})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "find the answer", Constraints: "no network"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete {
		t.Fatalf("outcome %s, want complete", res.Outcome)
	}
	if res.FinalAnswer != "finished: the answer is 42" || res.State.Summary != "all done" || res.State.Turns != 1 {
		t.Fatalf("answer %q summary %q turns %d", res.FinalAnswer, res.State.Summary, res.State.Turns)
	}
	req := p.Requests()[0]
	if req.Messages[0].Role != agent.RoleSystem || req.Messages[0].Content != "stable system prompt" {
		t.Fatalf("system prompt changed: %+v", req.Messages[0])
	}
	first := req.Messages[1].Content
	for _, want := range []string{`<goal id="g1" revision="1">`, "Objective: find the answer", "Constraints: no network",
		"Request: (not given: infer it", "Pause policy: Pause only for irreversible", "Start working on the goal."} {
		if !strings.Contains(first, want) {
			t.Errorf("first user turn lacks %q:\n%s", want, first)
		}
	}
	if got := store.load(t); got.Status != StatusComplete || len(got.History) == 0 {
		t.Fatalf("saved state: status %s, %d messages", got.Status, len(got.History))
	}
}

func TestCompletionWithOpenPlanItemsIsRefusedUntilThePlanIsDone(t *testing.T) {
	plan := func(second string) agent.ToolCall {
		return call("p"+second, "todo_write", map[string]any{"todos": []map[string]string{
			{"content": "write code", "status": "completed"}, {"content": "run tests", "status": second}}})
	}
	p := agenttest.NewScriptedProvider(
		calls(plan("pending"), complete("1", 1)),
		calls(plan("completed"), complete("2", 1)),
		say("done"),
	)
	c := newController(t, Config{Agent: base(t, p)})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "ship it"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.RefusedCompletions != 1 {
		t.Fatalf("outcome %s, refused completions %d", res.Outcome, res.State.RefusedCompletions)
	}
	refusal := p.Requests()[1].Messages
	got := refusal[len(refusal)-1].Content
	if !strings.Contains(got, "cannot complete") || !strings.Contains(got, "run tests (pending)") {
		t.Fatalf("refusal does not name the open item: %q", got)
	}
}

// A goal blocks only with a question for a person: a blocked report
// without one is refused and the goal goes on; with one it waits.
func TestBlockedNeedsAQuestionForAPerson(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(call("b", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "blocked", "reason": "the repository is archived"})),
		calls(call("q", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "blocked", "reason": "the repository is archived",
			"question": "Should I fork it or stop?"})),
		say("waiting for an answer"),
	)
	c := newController(t, Config{Agent: base(t, p)})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "fix it"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusQuestion || res.Question != "Should I fork it or stop?" || res.Reason != "the repository is archived" {
		t.Fatalf("outcome %s reason %q question %q", res.Outcome, res.Reason, res.Question)
	}
	if got := lastToolContent(p.Requests()[1]); !strings.Contains(got, "needs a question only a person can answer") {
		t.Fatalf("a blocked report without a question was not refused: %q", got)
	}
	if len(res.State.Blocked) != 1 {
		t.Fatalf("blocked history %+v", res.State.Blocked)
	}
}

func TestSameBlockedStateThreeTimesWithWordingDriftStops(t *testing.T) {
	poke := &fakeTool{name: "poke"} // a writer; the default gate refuses it
	answers := []string{"Blocked: I cannot write to prod!", "blocked   -  i CANNOT write to prod", "BLOCKED. I cannot write, to prod."}
	var turns []agenttest.Turn
	for i, a := range answers {
		turns = append(turns, calls(call("w"+a, "poke", map[string]any{"n": i})), say(a))
	}
	p := agenttest.NewScriptedProvider(turns...)
	c := newController(t, Config{Agent: base(t, p, poke), StallTurns: 10})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBlocked || res.State.Turns != 3 {
		t.Fatalf("outcome %s after %d turns, want blocked after 3", res.Outcome, res.State.Turns)
	}
	if n := res.State.Blocked; len(n) != 3 || n[0].Normalized != n[2].Normalized {
		t.Fatalf("blocked history %+v", n)
	}
	if !strings.Contains(lastUser(p.Requests()[2]), "was refused") {
		t.Fatalf("the second turn was not told about the refusal: %q", lastUser(p.Requests()[2]))
	}
}

func TestDifferentBlockedStatesDoNotStop(t *testing.T) {
	poke := &fakeTool{name: "poke"}
	p := agenttest.NewScriptedProvider(
		calls(call("1", "poke", map[string]any{"n": 1})), say("cannot write to prod"),
		calls(call("2", "poke", map[string]any{"n": 2})), say("cannot reach staging"),
		calls(call("3", "poke", map[string]any{"n": 3})), say("cannot write to prod"),
		calls(complete("x", 1)), say("ok"),
	)
	c := newController(t, Config{Agent: base(t, p, poke), StallTurns: 10})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.Turns != 4 {
		t.Fatalf("outcome %s after %d turns", res.Outcome, res.State.Turns)
	}
}

func TestTurnBudgetStopsAndResumeGrantsAFreshSlice(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(call("1", "probe", map[string]any{"q": 1})), say("step 1"),
		calls(call("2", "probe", map[string]any{"q": 2})), say("step 2"),
	)
	store := &memStore{}
	c := newController(t, Config{Agent: base(t, p), Store: store, Budget: Budget{Turns: 2}})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBudget || res.State.Turns != 2 {
		t.Fatalf("outcome %s after %d turns", res.Outcome, res.State.Turns)
	}
	st := store.load(t)
	p.Add(calls(complete("3", st.Revision+1)), say("done"))
	res, err = c.Resume(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.Turns != 3 || res.State.Slice.Turns != 1 {
		t.Fatalf("after resume: outcome %s, turns %d, slice %+v", res.Outcome, res.State.Turns, res.State.Slice)
	}
}

func TestTokenBudget(t *testing.T) {
	used := agent.Usage{Prompt: 50, Completion: 10}
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("1", "probe", map[string]any{"q": 1})}, Usage: used}, agenttest.Turn{Text: "a", Usage: used},
		agenttest.Turn{ToolCalls: []agent.ToolCall{call("2", "probe", map[string]any{"q": 2})}, Usage: used}, agenttest.Turn{Text: "b", Usage: used},
	)
	c := newController(t, Config{Agent: base(t, p), Budget: Budget{Tokens: 200}})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "spend"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBudget || res.State.Tokens != 240 || !strings.Contains(res.Reason, "token budget") {
		t.Fatalf("outcome %s tokens %d reason %q", res.Outcome, res.State.Tokens, res.Reason)
	}
}

func TestWallClockBudgetInterruptsALongTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := agenttest.NewScriptedProvider(agenttest.Delayed(time.Hour, say("too late")))
		c := newController(t, Config{Agent: base(t, p), Budget: Budget{WallClock: time.Minute}})
		res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "wait"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != StatusBudget || res.State.Active < time.Minute || res.State.Active > 2*time.Minute {
			t.Fatalf("outcome %s active %s", res.Outcome, res.State.Active)
		}
	})
}

// TestStalledGoalRedirectsThenCompletes: three turns without progress
// change the goal's strategy — the next turn opens with a different approach
// and the planner's fresh plan, whose usage counts in the goal's spend —
// instead of blocking it, and the goal then completes.
func TestStalledGoalRedirectsThenCompletes(t *testing.T) {
	same := func(id string) agent.ToolCall { return call(id, "probe", map[string]any{"q": "same"}) }
	p := agenttest.NewScriptedProvider(
		calls(same("1")), say("looked"), // novel: first time seen
		calls(same("2")), say("looked again"), // stalled 1
		calls(same("3")), say("looked again"), // stalled 2
		calls(same("4")), say("still looking"), // stalled 3: redirect
		calls(call("5", "probe", map[string]any{"q": "different"})), // novel, under the new strategy
		calls(complete("6", 1)), say("done another way"),
	)
	ev := &events{}
	cfg := base(t, p)
	cfg.Observer = ev.observe
	var replans []string
	c := newController(t, Config{Agent: cfg, Replan: func(_ context.Context, g Goal, why string, observe agent.Observer) (string, error) {
		replans = append(replans, g.Objective+": "+why)
		observe(agent.Event{Type: agent.EventUsage, Model: "planner", Usage: &agent.Usage{Prompt: 1000, Completion: 500}})
		return "1. probe something different", nil
	}, Price: func(model string, u agent.Usage) (float64, bool) {
		if model != "planner" {
			return 0, false
		}
		return float64(u.Prompt+u.Completion) / 1000, true
	}})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.Turns != 5 || res.State.Redirects != 1 {
		t.Fatalf("outcome %s reason %q turns %d redirects %d/%d", res.Outcome, res.Reason, res.State.Turns, res.State.Redirects, res.State.RedirectsInRow)
	}
	// The planner's request is the goal's spend: its tokens and its cost.
	if res.State.Tokens != 1500 || res.State.Cost != 1.5 {
		t.Fatalf("goal spend: %d tokens, $%g", res.State.Tokens, res.State.Cost)
	}
	in := lastUser(p.Requests()[8])
	if !strings.Contains(in, "Change strategy. "+redirectStrategies[0]) || !strings.Contains(in, "1. probe something different") {
		t.Fatalf("the fifth turn carried no redirect: %q", in)
	}
	if in := lastUser(p.Requests()[6]); strings.Contains(in, "Change strategy") {
		t.Fatalf("redirected too early: %q", in)
	}
	if len(replans) != 1 || !strings.HasPrefix(replans[0], "loop: The last 3 turns") {
		t.Fatalf("planner calls %q", replans)
	}
	if r := ev.of(EventRedirect); len(r) != 1 || r[0].Data.(Redirect).Strategy != redirectStrategies[0] {
		t.Fatalf("redirect events %+v", r)
	}
	if q := ev.of(EventQuestion); len(q) != 0 {
		t.Fatalf("a stall asked a question: %+v", q)
	}
}

// Redirects are bounded: a goal that never progresses, whatever strategy
// it is pointed at, ends its slice as a budget stop (resumable), not as
// blocked; each redirect names a different strategy.
func TestEndlessStallEndsTheSliceAfterMaxRedirects(t *testing.T) {
	var script []agenttest.Turn
	for i := range 12 {
		script = append(script, calls(call(fmt.Sprint(i), "probe", map[string]any{"q": "same"})), say("again"))
	}
	p := agenttest.NewScriptedProvider(script...)
	c := newController(t, Config{Agent: base(t, p), StallTurns: 1, MaxRedirects: 2})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusBudget || res.Reason != "no progress after 2 strategy redirects" || res.State.Turns != 4 {
		t.Fatalf("outcome %s reason %q turns %d", res.Outcome, res.Reason, res.State.Turns)
	}
	second, third := lastUser(p.Requests()[4]), lastUser(p.Requests()[6])
	if !strings.Contains(second, redirectStrategies[0]) || !strings.Contains(third, redirectStrategies[1]) {
		t.Fatalf("redirects did not change strategy:\n%q\n%q", second, third)
	}
}

func TestCancelStopsAndSavesTheGoal(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopper := &fakeTool{name: "stopper", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		cancel()
		return "stopping", nil
	}}
	p := agenttest.NewScriptedProvider(calls(call("1", "stopper", map[string]any{})), say("never"))
	store := &memStore{}
	c := newController(t, Config{Agent: base(t, p, stopper), Store: store})
	res, err := c.Run(ctx, Goal{ID: "g1", Objective: "stop me"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusCancelled || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("outcome %s err %v", res.Outcome, res.Err)
	}
	if st := store.load(t); st.Status != StatusCancelled {
		t.Fatalf("saved status %s", st.Status)
	}
}

func TestProviderFailureIsAFailedOutcomeWithItsReason(t *testing.T) {
	p := agenttest.NewScriptedProvider(agenttest.Fail(401, "bad key", 0))
	c := newController(t, Config{Agent: base(t, p)})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusFailed || res.Reason != "provider.rejected" {
		t.Fatalf("outcome %s reason %q", res.Outcome, res.Reason)
	}
}

func TestResumeAfterRestartContinuesTheSameConversation(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p1 := agenttest.NewScriptedProvider(
		calls(call("1", "probe", map[string]any{"q": "first"})), say("step one is done"),
		agenttest.Respond(func(agenttest.Request) agenttest.Turn { cancel(); return say("interrupted") }),
	)
	store := &memStore{}
	c1 := newController(t, Config{Agent: base(t, p1), Store: store})
	res, err := c1.Run(ctx, Goal{ID: "g1", Objective: "two steps"})
	if err != nil || res.Outcome != StatusCancelled {
		t.Fatalf("first process: %v %s", err, res.Outcome)
	}

	// A new process: a new provider, a new controller, the state from the store.
	st := store.load(t)
	p2 := agenttest.NewScriptedProvider(calls(complete("2", st.Revision+1)), say("both steps done"))
	c2 := newController(t, Config{Agent: base(t, p2), Store: store})
	res, err = c2.Resume(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete || res.State.Turns != 3 {
		t.Fatalf("outcome %s turns %d", res.Outcome, res.State.Turns)
	}
	msgs := p2.Requests()[0].Messages
	var sawStepOne, sawGoal bool
	for _, m := range msgs {
		sawStepOne = sawStepOne || m.Role == agent.RoleAssistant && m.Content == "step one is done"
		sawGoal = sawGoal || m.Role == agent.RoleUser && strings.Contains(m.Content, "Start working on the goal.")
	}
	if !sawStepOne || !sawGoal {
		t.Fatalf("the resumed conversation lost its history: %+v", msgs)
	}
	if !strings.Contains(lastUser(p2.Requests()[0]), "Continue working toward the goal") {
		t.Fatalf("resume did not continue: %q", lastUser(p2.Requests()[0]))
	}
}

func TestQuestionWaitsForTheRequesterAndTheAnswerResumes(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(call("q", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "blocked",
			"reason": "need the target", "question": "Which environment should I deploy to?"})),
		say("waiting"),
	)
	ev := &events{}
	cfg := base(t, p)
	cfg.Observer = ev.observe
	c := newController(t, Config{Agent: cfg})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusQuestion || res.Question != "Which environment should I deploy to?" {
		t.Fatalf("outcome %s question %q", res.Outcome, res.Question)
	}
	if len(ev.of(EventQuestion)) != 1 {
		t.Fatal("no question event")
	}
	rev := res.State.Revision + 1
	p.Add(calls(call("c", "update_goal", map[string]any{"goal_id": "g1", "revision": rev, "action": "complete", "summary": "deployed to staging"})), say("done"))
	res, err = c.Resume(t.Context(), res.State, "staging")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != StatusComplete {
		t.Fatalf("after the answer: %s (%s)", res.Outcome, res.Reason)
	}
	if in := lastUser(p.Requests()[2]); !strings.Contains(in, "Message from the requester:\nstaging") {
		t.Fatalf("the answer was not delivered: %q", in)
	}
}

func TestAutomatedTurnsMayOnlyCompleteOrBlockTheirOwnGoal(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		calls(call("1", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "pause"}),
			call("2", "update_goal", map[string]any{"goal_id": "other", "revision": 1, "action": "complete", "summary": "x"}),
			call("3", "update_goal", map[string]any{"goal_id": "g1", "revision": 7, "action": "complete", "summary": "x"}),
			call("4", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "continue"}),
			call("5", "create_goal", map[string]any{"objective": "another"})),
		calls(complete("6", 1)),
		say("done"),
	)
	c := newController(t, Config{Agent: base(t, p)})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "x"})
	if err != nil || res.Outcome != StatusComplete {
		t.Fatalf("%v %s", err, res.Outcome)
	}
	msgs := p.Requests()[1].Messages
	results := msgs[len(msgs)-5:]
	for i, want := range []string{"needs a direct turn from a person", "not this run's goal", "revision 7 is stale", "no longer exists", "never replaced"} {
		if !strings.Contains(results[i].Content, want) {
			t.Errorf("call %d: %q lacks %q", i+1, results[i].Content, want)
		}
	}
}

func TestHumanTurnMayPause(t *testing.T) {
	p := agenttest.NewScriptedProvider(calls(call("b", "update_goal", map[string]any{"goal_id": "g1", "revision": 1, "action": "blocked", "reason": "r", "question": "q?"})), say("b"))
	c := newController(t, Config{Agent: base(t, p)})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "x"})
	if err != nil || res.Outcome != StatusQuestion {
		t.Fatal(err, res.Outcome)
	}
	p.Add(calls(call("p", "update_goal", map[string]any{"goal_id": "g1", "revision": res.State.Revision + 1, "action": "pause"})), say("paused"))
	res, err = c.Resume(t.Context(), res.State, "please pause")
	if err != nil || res.Outcome != StatusPaused {
		t.Fatalf("%v %s", err, res.Outcome)
	}
}

func TestConfigAndStateValidation(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("a config without a provider was accepted")
	}
	p := agenttest.NewScriptedProvider()
	c := newController(t, Config{Agent: agent.Config{Provider: p}})
	if _, err := c.Run(t.Context(), Goal{}); err == nil {
		t.Error("a goal without an objective was accepted")
	}
	if _, err := c.Run(t.Context(), Goal{Objective: "x", PlanFirst: true}); err == nil {
		t.Error("a plan-first goal without an approver was accepted")
	}
	if _, err := DecodeState([]byte(`{"version":9}`)); err == nil {
		t.Error("an unknown state version was accepted")
	}
	if _, err := c.Resume(t.Context(), &State{Version: stateVersion, Status: StatusComplete, Goal: Goal{Objective: "x"}}, ""); err == nil {
		t.Error("a complete goal was resumed")
	}
	if n := normalizeBlocked("  Can't   WRITE, to prod!! "); n != "can t write to prod" {
		t.Errorf("normalize: %q", n)
	}
}

// lastToolContent is the content of the last tool message of r.
func lastToolContent(r agenttest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == agent.RoleTool {
			return r.Messages[i].Content
		}
	}
	return ""
}
