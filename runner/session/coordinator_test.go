package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/goals"
)

// coordinated is a session whose [agent] planner_model resolves to a
// scripted planner of its own, and the events its observer saw.
type coordinated struct {
	s       *Session
	planner *agenttest.ScriptedProvider
	mu      sync.Mutex
	events  []agent.Event
}

func newCoordinated(t testing.TB, planner ...agenttest.Turn) *coordinated {
	t.Helper()
	c := &coordinated{planner: agenttest.NewScriptedProvider(planner...)}
	set := config.Default()
	set.Agent.PlannerModel = "plan-model"
	set.Agent.PlannerEffort = "low"
	c.s = newSession(t, set, func(cfg *Config) {
		cfg.Instructions = "\n\nRepository rules: keep it small."
		cfg.Models = func(ref string) (Model, error) {
			if ref != "plan-model" {
				return Model{}, errors.New("unknown model " + ref)
			}
			return Model{Provider: c.planner, Name: "plan-model", Effort: "high"}, nil
		}
		cfg.Observer = func(e agent.Event) {
			c.mu.Lock()
			c.events = append(c.events, e)
			c.mu.Unlock()
		}
	})
	return c
}

func (c *coordinated) details() []PhaseDetail {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []PhaseDetail
	for _, e := range c.events {
		if e.Type == EventPhaseDetail {
			out = append(out, e.Data.(PhaseDetail))
		}
	}
	return out
}

func (c *coordinated) usage() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.events {
		if e.Type == agent.EventUsage {
			n++
		}
	}
	return n
}

func answer(text string) agenttest.Turn {
	return agenttest.Turn{Text: text, Usage: agent.Usage{Prompt: 10, Completion: 5}}
}

const structuredTask = "Tidy the release:\n- bump the version in cmd/reasonix/version.go\n- update docs/SPEC.md\n- regenerate deploy/k8s/base"

// TestCoordinateTakesEachRoute: each route is taken by the turn that
// should take it; the planner is asked only where the route needs a plan,
// at the depth the route names; the executor gets the plan after the
// pristine input, or does not start at all; one phase_detail per turn.
func TestCoordinateTakesEachRoute(t *testing.T) {
	cases := []struct {
		name    string
		turn    Turn
		route   Route
		depth   string // "" = the planner is not asked
		execute bool
	}{
		{"executor-only", Turn{Text: "Fix the off-by-one in runner/queue.go"}, RouteExecutorOnly, "", true},
		{"light", Turn{Text: "the nightly job seems off lately, something with the timing of the runs"}, RouteLight, "light", true},
		{"full", Turn{Text: structuredTask}, RouteFull, "full", true},
		{"plan-for-approval", Turn{Text: "Rewrite the scheduler and wait for my approval before you change code"}, RoutePlanForApproval, "full", false},
		{"plan-only by text", Turn{Text: "Refactor the store package, plan only."}, RoutePlanOnly, "full", false},
		{"plan-only by option", Turn{Text: "add a flag", PlanOnly: true}, RoutePlanOnly, "full", false},
		{"synthetic", Turn{Text: structuredTask, Synthetic: true}, RouteExecutorOnly, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCoordinated(t, answer("1. read the code\n2. change it"))
			tc.turn.Input = tc.turn.Text + "\n<file path=\"x\">expanded</file>"
			got := c.s.Coordinate(t.Context(), tc.turn)
			if got.Detail.Route != tc.route || got.Execute != tc.execute || got.Err != nil {
				t.Fatalf("route %s execute %v err %v, want %s %v", got.Detail.Route, got.Execute, got.Err, tc.route, tc.execute)
			}
			reqs := c.planner.Requests()
			if tc.depth == "" {
				if len(reqs) != 0 || got.Input != tc.turn.Input || got.Plan != "" || got.Detail.Planner != "none" {
					t.Fatalf("no plan wanted: %d planner requests, input %q, detail %+v", len(reqs), got.Input, got.Detail)
				}
			} else {
				if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, "<planner-turn>\ndepth: "+tc.depth+"\n") ||
					!strings.Contains(reqs[0].Messages[1].Content, "expanded") || reqs[0].Effort != "low" {
					t.Fatalf("planner requests %+v", reqs)
				}
				if got.Plan != "1. read the code\n2. change it" || got.Detail.Planner != "planned" || got.Detail.PlanChars != len(got.Plan) {
					t.Fatalf("plan %q detail %+v", got.Plan, got.Detail)
				}
				if tc.execute && !strings.HasPrefix(got.Input, tc.turn.Input+"\n\n<plan>\n1. read the code\n2. change it\n</plan>\n") ||
					!tc.execute && got.Input != tc.turn.Input {
					t.Fatalf("executor input %q", got.Input)
				}
				if c.usage() != 1 {
					t.Fatalf("the planner's usage reached the observer %d times", c.usage())
				}
			}
			if d := c.details(); len(d) != 1 || d[0].Route != tc.route {
				t.Fatalf("phase_detail events %+v", d)
			}
		})
	}
}

// Without a planner every turn is executor-only, no model is asked and no
// event is logged.
func TestCoordinateWithoutPlanner(t *testing.T) {
	var events []agent.Event
	s := newSession(t, nil, func(cfg *Config) { cfg.Observer = func(e agent.Event) { events = append(events, e) } })
	got := s.Coordinate(t.Context(), Turn{Text: structuredTask})
	if got.Detail.Route != RouteExecutorOnly || got.Detail.Reason != "no planner configured" || !got.Execute || got.Input != structuredTask {
		t.Fatalf("%+v", got)
	}
	if len(events) != 0 {
		t.Fatalf("events %+v", events)
	}
}

// TestPlannerFailureFallsBack: on the light and full routes a failed
// planner lets the executor go on with the pristine input; on plan-only
// and plan-for-approval it fails closed: nothing executes.
func TestPlannerFailureFallsBack(t *testing.T) {
	fail := agenttest.Fail(400, "bad request", 0)
	for _, tc := range []struct {
		text     string
		execute  bool
		fallback string
	}{
		{structuredTask, true, "executor-only"},
		{"the nightly job seems off lately, something with the timing of the runs", true, "executor-only"},
		{"Refactor the store package, plan only.", false, "none"},
		{"Rewrite the scheduler and wait for my approval before you change code", false, "none"},
	} {
		c := newCoordinated(t, fail)
		got := c.s.Coordinate(t.Context(), Turn{Text: tc.text})
		if got.Execute != tc.execute || got.Plan != "" || got.Detail.Planner != "failed" || got.Detail.Fallback != tc.fallback {
			t.Errorf("%q: %+v", tc.text, got)
		}
		if tc.execute && (got.Input != tc.text || got.Err != nil) {
			t.Errorf("%q: fallback input %q err %v", tc.text, got.Input, got.Err)
		}
		if !tc.execute && got.Err == nil {
			t.Errorf("%q: a fail-closed route reported no error", tc.text)
		}
	}
}

// TestPlannerIsReadOnlyAndItsPrefixStable: the planner sees only the
// research readers, a writer it asks for anyway is refused, and the
// prefix of its requests (system prompt with the instructions, tools) is
// the same bytes on every request of a turn and across turns. A planner
// that keeps researching past its budget gets one grace round and its
// plan is used.
func TestPlannerIsReadOnlyAndItsPrefixStable(t *testing.T) {
	read := agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "r", Name: "ls", Arguments: `{"path":"."}`}}}
	write := agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"x","content":"y"}`}}}
	turns := []agenttest.Turn{read, write, answer("plan A")}
	for range lightResearchSteps {
		turns = append(turns, read)
	}
	turns = append(turns, answer("plan B"))
	c := newCoordinated(t, turns...)
	light := "the nightly job seems off lately, something with the timing of the runs"
	first := c.s.Coordinate(t.Context(), Turn{Text: light})
	second := c.s.Coordinate(t.Context(), Turn{Text: light + " again"})
	if first.Plan != "plan A" || second.Plan != "plan B" {
		t.Fatalf("plans %q %q (details %+v)", first.Plan, second.Plan, c.details())
	}
	if d := c.details(); d[1].PlannerSteps != lightResearchSteps+1 {
		t.Fatalf("the grace round was not taken: %+v", d[1])
	}
	reqs := c.planner.Requests()
	var names []string
	for _, tool := range reqs[0].Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"glob", "grep", "ls", "read_file"}) {
		t.Fatalf("planner tools %v", names)
	}
	for _, m := range reqs[2].Messages {
		if m.Role == agent.RoleTool && m.ToolCallID == "w" && !strings.Contains(m.Content, "unknown tool") {
			t.Fatalf("the planner's write was not refused: %q", m.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(c.s.Env.Workdir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the planner wrote a file: %v", err)
	}
	prefix := func(r agenttest.Request) string {
		tools, _ := json.Marshal(r.Tools)
		return r.Messages[0].Content + "\x00" + string(tools)
	}
	want := prefix(reqs[0])
	if !strings.HasPrefix(want, coordinatorPrompt+"\n\nRepository rules") {
		t.Fatalf("planner system prompt %q", reqs[0].Messages[0].Content)
	}
	for i, r := range reqs {
		if prefix(r) != want {
			t.Fatalf("request %d: the planner's prefix changed", i)
		}
		if r.Model != "plan-model" {
			t.Fatalf("request %d went to %q", i, r.Model)
		}
	}
	if n := len(reqs); n != 3+lightResearchSteps+1 {
		t.Fatalf("%d planner requests", n)
	}
}

// The phase_detail payload carries counts and flags, never the words of
// the request or of the plan.
func TestPhaseDetailIsPrivacySafe(t *testing.T) {
	c := newCoordinated(t, answer("rotate hunter2 first"))
	c.s.Coordinate(t.Context(), Turn{Text: "Rotate the secret hunter2 in config/prod.yaml and redeploy the database, plan only"})
	raw, err := json.Marshal(c.details())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "prod") || !strings.Contains(string(raw), `"route":"plan-only"`) {
		t.Fatalf("phase_detail %s", raw)
	}
}

// planAlways answers every request at once with the same short plan: a
// planner that costs no model time, so a benchmark measures the host.
type planAlways struct{}

func (planAlways) Name() string { return "plan-always" }

func (planAlways) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	return agenttest.NewScriptedProvider(answer("1. read the code\n2. change it")).Stream(ctx, req)
}

// BenchmarkCoordinate is the host's cost of routing one turn: without a
// planner (nothing to do), with one on a turn that goes to the executor
// alone (Decide and the phase_detail event), and on the light and full
// routes (building the planner's tools and agent, one instant planner
// request, the plan handed over): the per-turn overhead the planner path
// adds on top of the planner model's own time.
func BenchmarkCoordinate(b *testing.B) {
	text := map[string]string{
		"executor-only": "Fix the off-by-one in runner/queue.go",
		"light":         "the nightly job seems off lately, something with the timing of the runs",
		"full":          structuredTask,
	}
	b.Run("no-planner", func(b *testing.B) {
		s := newSession(b, nil, nil)
		for b.Loop() {
			s.Coordinate(b.Context(), Turn{Text: structuredTask})
		}
	})
	for _, route := range []string{"executor-only", "light", "full"} {
		b.Run(route, func(b *testing.B) {
			set := config.Default()
			set.Agent.PlannerModel = "plan-model"
			s := newSession(b, set, func(cfg *Config) {
				cfg.Models = func(string) (Model, error) { return Model{Provider: planAlways{}, Name: "plan-model"}, nil }
				cfg.Observer = func(agent.Event) {}
			})
			for b.Loop() {
				if c := s.Coordinate(b.Context(), Turn{Text: text[route]}); string(c.Detail.Route) != route {
					b.Fatalf("route %s", c.Detail.Route)
				}
			}
		})
	}
}

// TestCoordinateGoal: a goal's opening turn is routed as a goal's (a
// non-atomic change gets the full contract); the plan joins the goal's
// Context; a turn that must not execute before a person saw a plan makes
// the goal plan-first, also when the planner failed.
func TestCoordinateGoal(t *testing.T) {
	change := strings.Repeat("add a retry with backoff to the webhook sender and log each attempt clearly ", 3)
	c := newCoordinated(t, answer("1. wrap send in a retry loop"))
	g := goals.Goal{Objective: change, Context: "from the requester"}
	got := c.s.CoordinateGoal(t.Context(), &g, change)
	if got.Detail.Route != RouteFull || !got.Detail.Goal || g.PlanFirst ||
		!strings.HasPrefix(g.Context, "from the requester\n\nA planner") || !strings.HasSuffix(g.Context, "1. wrap send in a retry loop") {
		t.Fatalf("route %s goal %+v", got.Detail.Route, g)
	}
	if reqs := c.planner.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, "goal: yes") {
		t.Fatalf("planner requests %+v", reqs)
	}

	c = newCoordinated(t, answer("1. draft the change"))
	g = goals.Goal{Objective: "Rewrite the scheduler, plan only"}
	if got = c.s.CoordinateGoal(t.Context(), &g, g.Objective); !g.PlanFirst || !strings.Contains(g.Context, "1. draft the change") {
		t.Fatalf("plan-only goal %+v (%+v)", g, got.Detail)
	}

	c = newCoordinated(t, agenttest.Fail(400, "bad request", 0))
	g = goals.Goal{Objective: "Rewrite the scheduler and wait for my approval before you change code"}
	if got = c.s.CoordinateGoal(t.Context(), &g, g.Objective); !g.PlanFirst || g.Context != "" || got.Detail.Planner != "failed" {
		t.Fatalf("failed planner, goal %+v (%+v)", g, got.Detail)
	}

	c = newCoordinated(t)
	g = goals.Goal{Objective: "Fix the off-by-one in runner/queue.go"}
	if c.s.CoordinateGoal(t.Context(), &g, g.Objective); g.PlanFirst || g.Context != "" || len(c.planner.Requests()) != 0 {
		t.Fatalf("atomic edit goal %+v", g)
	}
}
