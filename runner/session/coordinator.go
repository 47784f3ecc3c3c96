package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"reasonix/agent"
	"reasonix/goals"
)

// EventPhaseDetail reports how the Coordinator handled a user turn: the
// route, the counts and flags that chose it, and what the planner did.
// Its Data is a PhaseDetail.
const EventPhaseDetail agent.EventType = "phase_detail"

// PhaseDetail is the phase_detail payload. Like RouteDecision it holds
// counts and flags, never the user's words or the plan's.
type PhaseDetail struct {
	RouteDecision
	// Planner is what the planner did: "none" (the route needs no plan),
	// "planned", or "failed".
	Planner string `json:"planner"`
	// PlannerSteps is the planner's model requests, the grace round's too.
	PlannerSteps int `json:"planner_steps,omitempty"`
	// PlanChars is the plan's length in bytes.
	PlanChars int `json:"plan_chars,omitempty"`
	// Fallback is "executor-only" when a failed planner let the executor
	// go on with the pristine task, "none" when the route fails closed.
	Fallback string `json:"fallback,omitempty"`
}

// Turn is one user turn as the Coordinator sees it.
type Turn struct {
	// Text is the pristine user text: what the person wrote, before any
	// host expansion. Only it is judged (seed §3.5).
	Text string
	// Input is what the executor would receive (Text with its @ references
	// expanded); "" is Text. The planner reads it too.
	Input string
	// PlanOnly, Goal and Synthetic are trusted metadata (see RouteInput).
	PlanOnly  bool
	Goal      bool
	Synthetic bool
}

// Coordinated is the Coordinator's answer for a turn.
type Coordinated struct {
	Detail PhaseDetail
	// Plan is the planner's plan ("" when there is none).
	Plan string
	// Input is what the executor receives: the turn's input, with the plan
	// appended in a <plan> block when it executes one. It goes in the user
	// message, never the system prompt, so the executor's prefix stays
	// byte-stable.
	Input string
	// Execute is false when the executor must not start: a plan-only turn
	// or a plan that waits for approval.
	Execute bool
	// Err is a fail-closed planner failure on a plan-only or
	// plan-for-approval turn: nothing may execute and there is no plan.
	Err error
}

// Planner research budgets: the model requests a light and a full plan may
// spend reading before they must answer. One grace round without research
// follows when they are spent.
const (
	lightResearchSteps = 4
	fullResearchSteps  = 12
)

// plannerTools are the research tools the planner may use: built-in
// readers only. Writers, bash, workflow tools (todos, memory, goals) and
// MCP tools (whose read-only hint is no trust grant for the planner, seed
// §3.3) are never exposed to it.
var plannerTools = []string{"glob", "grep", "ls", "read_file"}

// coordinatorPrompt is the planner's whole system prompt in the
// Coordinator: one stable text holding both depth contracts, so the
// planner's prefix (this prompt, the instructions, the research tools)
// is the same bytes on every request; only the <planner-turn> block of
// each turn differs.
const coordinatorPrompt = "You are the planner of a coding agent. You do not change anything; you read what you need " +
	"with the research tools and then write a plan that another model (the executor) carries out in the workspace. " +
	"Each turn opens with a <planner-turn> block naming the depth of plan wanted.\n\n" +
	"depth: light - a compact plan: the objective in one line, 1 to 4 ordered steps, the likely touchpoints (files, " +
	"functions, commands) and the primary verification. Read little: a few lookups at most.\n\n" +
	"depth: full - the full contract: the objective; the touchpoints, marking each as verified (you read it) or " +
	"candidate (a guess); ordered steps; risks; acceptance criteria; verification as exact commands; rollback where " +
	"a step is hard to undo.\n\n" +
	"Answer with the plan only, as plain text or markdown. Never claim to have done a step. If the request is " +
	"unclear, plan the most reasonable reading and say which assumption the executor must check first."

// PlannerConfigured reports whether [agent] planner_model names a model
// other than the executor's, so turns are routed.
func (s *Session) PlannerConfigured() bool {
	ref := strings.TrimSpace(s.cfg.Settings.Agent.PlannerModel)
	return ref != "" && !strings.EqualFold(ref, s.Agent.Model) && !strings.EqualFold(ref, agent.ModelRef(s.Agent))
}

// plannerModel resolves [agent] planner_model with [agent] planner_effort.
func (s *Session) plannerModel() (Model, error) {
	ref := strings.TrimSpace(s.cfg.Settings.Agent.PlannerModel)
	resolve := s.cfg.Models
	if resolve == nil {
		resolve = func(ref string) (Model, error) { return ResolveModel(s.cfg.Settings, ref) }
	}
	m, err := resolve(ref)
	if err != nil {
		return Model{}, fmt.Errorf("session: planner_model %q: %w", ref, err)
	}
	m.Effort = cmp.Or(s.cfg.Settings.Agent.PlannerEffort, m.Effort)
	return m, nil
}

// Coordinate routes one user turn (session.Decide) and, when the route
// asks for one, gets a plan from the planner in its own session. It emits
// one phase_detail event on the session's observer. The planner's usage
// events go to the observer too, so its cost counts in the task's spend;
// its messages never reach the executor's transcript.
//
// Without a planner it is the executor-only route, with no event and no
// Decide. A planner failure on the light and full routes falls back to
// the executor with the pristine input; on plan-only and
// plan-for-approval it fails closed (Err).
func (s *Session) Coordinate(ctx context.Context, t Turn) Coordinated {
	input := cmp.Or(t.Input, t.Text)
	if !s.PlannerConfigured() {
		// One model: nothing to route, and no event for it.
		return Coordinated{Detail: PhaseDetail{RouteDecision: RouteDecision{Route: RouteExecutorOnly, Reason: "no planner configured"},
			Planner: "none"}, Input: input, Execute: true}
	}
	d := Decide(RouteInput{Text: t.Text, PlanOnly: t.PlanOnly, Goal: t.Goal, Synthetic: t.Synthetic, Planner: true})
	c := Coordinated{Detail: PhaseDetail{RouteDecision: d, Planner: "none"}, Input: input, Execute: true}
	if d.Route != RouteExecutorOnly {
		depth := "light"
		if d.Route != RouteLight {
			// What a person will read before anything runs gets the full
			// contract.
			depth = "full"
		}
		plan, steps, err := s.plan(ctx, depth, d, input)
		c.Detail.PlannerSteps = steps
		failClosed := d.Route == RoutePlanOnly || d.Route == RoutePlanForApproval
		switch {
		case err != nil && failClosed:
			c.Detail.Planner, c.Detail.Fallback = "failed", "none"
			c.Execute, c.Err = false, err
		case err != nil:
			c.Detail.Planner, c.Detail.Fallback = "failed", string(RouteExecutorOnly)
		default:
			c.Detail.Planner, c.Detail.PlanChars, c.Plan = "planned", len(plan), plan
			if c.Execute = !failClosed; c.Execute {
				c.Input = withPlan(input, plan)
			}
		}
	}
	s.Agent.Observer(agent.Event{Type: EventPhaseDetail, Data: c.Detail})
	return c
}

// withPlan hands the plan to the executor after the pristine input.
func withPlan(input, plan string) string {
	return input + "\n\n<plan>\n" + strings.TrimSpace(plan) + "\n</plan>\n" +
		"A planner that could only read wrote the plan above. Check its candidate assumptions as you carry it out; " +
		"where the workspace disagrees with it, the workspace wins."
}

// plannerTurn is the per-turn block: the only bytes of a planner request
// that differ from one turn to the next, after the stable prefix.
func plannerTurn(depth string, d RouteDecision, input string) string {
	return "<planner-turn>\ndepth: " + depth + "\nroute: " + string(d.Route) + "\ngoal: " + yesNo(d.Goal) +
		"\n</planner-turn>\n\n" + input
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// errPlannerUnfinished: the planner spent its research budget and its
// grace round without writing a plan.
var errPlannerUnfinished = errors.New("session: the planner did not write a plan")

// plan runs the planner for one turn: a fresh conversation on the stable
// prefix, research within the depth's budget, then one grace round that
// asks for the plan. An incomplete planner turn is dropped, never shown.
func (s *Session) plan(ctx context.Context, depth string, d RouteDecision, input string) (string, int, error) {
	cfg, err := s.plannerConfig(depth)
	if err != nil {
		return "", 0, err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return "", 0, err
	}
	res := a.Run(ctx, plannerTurn(depth, d, input))
	steps := res.Steps
	if res.Outcome == agent.OutcomeSucceeded && strings.TrimSpace(res.FinalAnswer) != "" {
		return res.FinalAnswer, steps, nil
	}
	if ctx.Err() != nil || !errors.Is(res.Err, agent.ErrStepLimit) {
		return "", steps, cmp.Or(res.Err, errPlannerUnfinished)
	}
	// The grace round: the same prefix and tools (so the cache still
	// hits), every call refused, one request.
	cfg.History, cfg.MaxSteps, cfg.Gate = a.Messages(), 1, agent.GateFunc(refuseResearch)
	g, err := agent.New(cfg)
	if err != nil {
		return "", steps, err
	}
	res = g.Run(ctx, "Research is over. Write the plan now from what you found.")
	steps += res.Steps
	if res.Outcome == agent.OutcomeSucceeded && strings.TrimSpace(res.FinalAnswer) != "" {
		return res.FinalAnswer, steps, nil
	}
	return "", steps, cmp.Or(res.Err, errPlannerUnfinished)
}

func refuseResearch(context.Context, agent.Call) (agent.Verdict, error) {
	return agent.Verdict{Code: agent.RefusedByRule, Reason: "research is over: write the plan"}, nil
}

// plannerConfig is the planner's agent: its own model and effort, the
// stable prompt plus the repository's instructions (the standing context
// the executor has too), the read-only research tools behind a read-only
// gate, and an observer that passes on only the usage.
func (s *Session) plannerConfig(depth string) (agent.Config, error) {
	m, err := s.plannerModel()
	if err != nil {
		return agent.Config{}, err
	}
	tools, err := s.plannerRegistry()
	if err != nil {
		return agent.Config{}, err
	}
	gate, err := s.newChildGate()
	if err != nil {
		return agent.Config{}, err
	}
	observe := s.Agent.Observer
	steps := lightResearchSteps
	if depth == "full" {
		steps = fullResearchSteps
	}
	return agent.Config{
		Provider: m.Provider, Model: m.Name, MaxTokens: m.MaxTokens, Effort: m.Effort,
		Tools: tools, Gate: readOnlyGate(gate, "planner"),
		SystemPrompt: coordinatorPrompt + s.cfg.Instructions,
		MaxSteps:     steps, ContextWindow: m.ContextWindow, CompactRatio: s.Agent.CompactRatio,
		Recall: s.cfg.Recall,
		Observer: func(e agent.Event) {
			if e.Type == agent.EventUsage && observe != nil {
				observe(e)
			}
		},
	}, nil
}

// plannerRegistry builds the research tools ([tools] enabled still
// applies), redacted like every tool of the session.
func (s *Session) plannerRegistry() (*agent.ToolRegistry, error) {
	names := plannerTools
	if enabled := s.cfg.Settings.Tools.Enabled; len(enabled) > 0 {
		names = slices.DeleteFunc(slices.Clone(plannerTools), func(n string) bool { return !slices.Contains(enabled, n) })
	}
	env := s.Env
	env.Emit, env.Memory, env.History = nil, nil, nil
	tools := agent.NewToolRegistry()
	known := agent.Builtins()
	for _, n := range names {
		if !slices.Contains(known, n) {
			continue // a build without that built-in
		}
		if err := tools.AddBuiltins(env, []string{n}); err != nil {
			return nil, fmt.Errorf("session: planner tools: %w", err)
		}
	}
	for _, n := range tools.Names() {
		if t, _ := tools.Get(n); !agent.IsReadOnly(t) {
			return nil, fmt.Errorf("session: planner tool %s is not read-only", n)
		}
	}
	return redactTools(tools, s.cfg.Redactor)
}

// ErrPlanAwaitsApproval ends a plan-for-approval turn where nobody can
// approve the plan: it is persisted, nothing executes, and the run is
// blocked.
var ErrPlanAwaitsApproval = errors.New("the plan waits for approval before anything runs, and nobody here can approve it; " +
	"reply to go ahead, or ask again without waiting for approval")

// Hold ends a turn the executor must not start (c.Execute is false)
// without a model request: the turn and its plan join the executor's
// conversation through the observer (so the transcript keeps them and a
// later turn continues from the plan), and the result says how it ended:
// a plan-only turn succeeded with the plan as its answer, a plan that
// waits for approval is blocked (ErrPlanAwaitsApproval), a fail-closed
// planner failure failed.
func (s *Session) Hold(c Coordinated) agent.Result {
	obs := s.Agent.Observer
	res := agent.Result{Outcome: agent.OutcomeSucceeded, FinalAnswer: c.Plan}
	if c.Err != nil {
		res.FinalAnswer = ""
	}
	switch {
	case c.Err != nil:
		res.Outcome = agent.OutcomeFailed
		res.Err = fmt.Errorf("the planner failed, and a %s turn never falls back to the executor: %w", c.Detail.Route, c.Err)
	case c.Detail.Route == RoutePlanForApproval:
		res.Outcome, res.Err = agent.OutcomeBlocked, ErrPlanAwaitsApproval
	}
	s.Keep(c)
	obs(agent.Event{Type: agent.EventRunFinished, Outcome: res.Outcome, Text: res.FinalAnswer})
	return res
}

// Keep appends a held turn to the executor's conversation through the
// observer: the user's input and, when there is one, the plan as the
// assistant's answer.
func (s *Session) Keep(c Coordinated) {
	obs := s.Agent.Observer
	obs(agent.Event{Type: agent.EventMessage, Message: &agent.Message{Role: agent.RoleUser, Content: c.Input}})
	if c.Err == nil && c.Plan != "" {
		obs(agent.Event{Type: agent.EventMessage, Message: &agent.Message{Role: agent.RoleAssistant, Content: c.Plan}})
	}
}

// CoordinateGoal routes a goal's opening turn (text is its pristine
// prompt, g.Objective what the executor reads) and adapts g: a light or
// full plan joins the goal's Context, so every turn of the goal sees it;
// a turn that must not execute before a person has seen a plan
// (plan-for-approval, plan-only, or either with a failed planner) becomes
// a plan-first goal, whose plan needs an approval before anything changes,
// with the planner's plan, when there is one, in its Context. Later turns
// of a goal are not routed: its stalls ask the planner (Replan).
func (s *Session) CoordinateGoal(ctx context.Context, g *goals.Goal, text string) Coordinated {
	c := s.Coordinate(ctx, Turn{Text: text, Input: g.Objective, Goal: true})
	if !c.Execute {
		g.PlanFirst = true
	}
	if c.Plan != "" {
		g.Context = strings.TrimSpace(g.Context + "\n\nA planner that could only read proposes this plan; check its candidate " +
			"assumptions as you carry it out, and where the workspace disagrees with it, the workspace wins:\n" + strings.TrimSpace(c.Plan))
	}
	return c
}
