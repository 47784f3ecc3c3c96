package session

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/policy"
)

// GoalConfig is what a goal needs beyond its session.
type GoalConfig struct {
	// Store saves the goal's state after every turn; nil keeps it in memory.
	Store goals.StateStore
	// BudgetUSD, when above 0, is this goal's cost budget per slice in
	// place of [agent] goal_budget_usd.
	BudgetUSD float64
	// PlanApprover reviews the plans of plan-first goals; nil refuses them.
	PlanApprover goals.PlanApprover
	// OnTurn is goals.Config.OnTurn: it sees each turn's agent, to steer it.
	OnTurn func(*agent.Agent)
	// FleetObserver receives the fleet's and the sub-agents' lifecycle
	// events; nil is the session's Observer.
	FleetObserver agent.Observer
	// Child adapts each sub-agent: it may wrap the tools (the runner's
	// journal) and returns the observer of the sub-agent's own events. Nil
	// keeps the tools and drops those events.
	Child func(spec goals.ChildSpec, tools *agent.ToolRegistry) (*agent.ToolRegistry, agent.Observer, error)
	// NoDelegation runs the control arm of `--ablate subagent`: the goal's
	// turns get no task or fleet tool (goals.Config.NoDelegation) and
	// run_skill no sub-agent skill (Session.NoDelegation).
	NoDelegation bool
}

// Goal is a goal controller with its sub-agent host, built by Session.Goal.
type Goal struct {
	Controller *goals.Controller
	Host       *goals.Host
	childGate  agent.Gate
	// planApproved mirrors the state's approved-plan window for the child
	// factory, which runs while the controller owns the state.
	planApproved atomic.Bool
}

// Run starts a goal; see goals.Controller.Run.
func (g *Goal) Run(ctx context.Context, goal goals.Goal) (goals.Result, error) {
	return g.Controller.Run(ctx, goal)
}

// Resume continues a saved goal; see goals.Controller.Resume.
func (g *Goal) Resume(ctx context.Context, st *goals.State, message string) (goals.Result, error) {
	g.planApproved.Store(st.PlanApproved)
	return g.Controller.Resume(ctx, st, message)
}

// Goal builds the goal controller of the session: its Agent is the base of
// every turn, its budgets come from [agent], and sub-agents are built like
// the parent (provider, model, workspace, confinement) with their own
// prompt, a fresh set of built-ins and the sub-agent gate (see the package
// documentation). A writer sub-agent with a write claim keeps bash only
// when the OS sandbox can bind it to the claim.
func (s *Session) Goal(gc GoalConfig) (*Goal, error) {
	set := s.cfg.Settings
	if gc.NoDelegation {
		s.NoDelegation()
	}
	childGate, err := s.newChildGate()
	if err != nil {
		return nil, err
	}
	g := &Goal{childGate: childGate}
	host, err := s.newHost(gc, childGate, g.planApproved.Load)
	if err != nil {
		return nil, err
	}
	store := goals.StateStoreFunc(func(ctx context.Context, st *goals.State) error {
		g.planApproved.Store(st.PlanApproved)
		if gc.Store == nil {
			return nil
		}
		return gc.Store.SaveGoal(ctx, st)
	})
	replan, err := s.replanner()
	if err != nil {
		return nil, err
	}
	ctl, err := goals.New(goals.Config{
		Replan: replan,
		Agent:  s.Agent,
		Store:  store,
		Budget: goals.Budget{
			Tokens:    set.Agent.GoalTokenBudget,
			Turns:     set.Agent.GoalMaxTurns,
			WallClock: set.Agent.GoalWallClock,
			USD:       cmp.Or(gc.BudgetUSD, set.Agent.GoalBudgetUSD),
			Warn:      set.Runner.BudgetWarn,
		},
		Price:        s.cfg.Prices.Cost,
		Approver:     gc.PlanApprover,
		Policy:       s.Policy,
		Workdir:      s.cfg.Workdir,
		Host:         host,
		NoDelegation: s.noDelegation.Load(),
		OnTurn:       gc.OnTurn,
	})
	if err != nil {
		return nil, err
	}
	g.Controller, g.Host = ctl, host
	// The goal's run_skill sub-agents are its host's children, so they
	// count against the goal's slice budget like a task tool's.
	s.skillHost.Store(host)
	return g, nil
}

// newHost builds a sub-agent host: children built like the parent
// (provider, model, workspace, confinement) with their own prompt, a fresh
// set of built-ins and gate, adapted by gc.Child and observed by
// gc.FleetObserver (the session's Observer when nil).
func (s *Session) newHost(gc GoalConfig, childGate agent.Gate, planApproved func() bool) (*goals.Host, error) {
	set := s.cfg.Settings
	return goals.NewHost(goals.HostConfig{
		Factory: goals.ChildFactoryFunc(func(_ context.Context, spec goals.ChildSpec) (agent.Config, error) {
			return s.child(spec, gc, childGate, planApproved())
		}),
		Workdir:            s.cfg.Workdir,
		Paths:              s.Confinement,
		MaxConcurrency:     set.Agent.MaxSubagentConcurrency,
		MaxParallelWriters: set.Agent.MaxParallelWriters,
		MaxDepth:           set.Agent.MaxSubagentDepth,
		ShellBound:         true, // child binds bash through goals.ClaimedShell
		Price:              s.cfg.Prices.Cost,
		ReadOnlyProfile:    s.readOnlyProfile,
		Observer:           cmpObserver(gc.FleetObserver, s.Agent.Observer),
	})
}

// SkillHost gives a run outside a goal a host for its run_skill sub-agent
// skills, so each runs, costs, counts and reports exactly as a goal's task
// tool child does: gc.Child adapts and observes every child (its usage
// events are where the run counts the child's spend), gc.FleetObserver
// receives the subagent_started/finished and fleet events. Only Child and
// FleetObserver of gc are used. A later Goal replaces the host with its
// own. Without either, run_skill builds its sub-agent directly and its
// events stay its own.
func (s *Session) SkillHost(gc GoalConfig) (*goals.Host, error) {
	childGate, err := s.newChildGate()
	if err != nil {
		return nil, err
	}
	host, err := s.newHost(GoalConfig{Child: gc.Child, FleetObserver: gc.FleetObserver}, childGate, func() bool { return false })
	if err != nil {
		return nil, err
	}
	s.skillHost.Store(host)
	return host, nil
}

// child builds one sub-agent's configuration.
func (s *Session) child(spec goals.ChildSpec, gc GoalConfig, gate agent.Gate, planApproved bool) (agent.Config, error) {
	prof, err := s.childProfile(spec.Profile)
	if err != nil {
		return agent.Config{}, err
	}
	m, err := s.childModel(spec, prof)
	if err != nil {
		return agent.Config{}, err
	}
	env := s.Env
	env.Emit = nil // a child's plan is its own, not the task's checklist
	// Memory is the task's to keep: a sub-agent neither writes nor
	// searches it (its brief carries what it needs); history it may read.
	env.Memory = nil
	// Skills are the parent's: a sub-agent's brief is its whole task.
	env.Skills = nil
	env.Vision = m.Vision // the child's own model decides whether it sees images
	var names []string
	env.Shell, names = goals.ClaimedShell(s.Confinement, spec, env.Shell, s.cfg.Settings.Tools.Enabled)
	tools := agent.NewToolRegistry()
	if err := tools.AddBuiltins(env, names); err != nil {
		return agent.Config{}, fmt.Errorf("session: sub-agent tools: %w", err)
	}
	s.addPluginTools(tools)
	if tools, err = narrowTools(tools, prof); err != nil {
		return agent.Config{}, err
	}
	tools, err = redactTools(tools, s.cfg.Redactor)
	if err != nil {
		return agent.Config{}, err
	}
	var obs agent.Observer
	if gc.Child != nil {
		if tools, obs, err = gc.Child(spec, tools); err != nil {
			return agent.Config{}, err
		}
	}
	if planApproved {
		gate = goals.ApprovedPlanGate(s.Policy, s.cfg.Workdir, gate)
	}
	if prof.ReadOnly {
		gate = readOnlyGate(gate, prof.Name)
	}
	return agent.Config{
		Provider:     m.Provider,
		Model:        m.Name,
		Tools:        tools,
		Gate:         gate,
		SystemPrompt: prof.SystemPrompt + s.cfg.Instructions,
		Temperature:  s.Agent.Temperature,
		MaxTokens:    m.MaxTokens,
		Effort:       m.Effort,
		MaxSteps:     s.Agent.MaxSteps,
		Observer:     obs,
		// A sub-agent's conversation compacts like the parent's.
		ContextWindow: m.ContextWindow,
		CompactRatio:  s.Agent.CompactRatio,
	}, nil
}

func cmpObserver(a, b agent.Observer) agent.Observer {
	if a != nil {
		return a
	}
	return b
}

// newChildGate is the sub-agents' gate: the session's policy and posture
// with nobody to ask, so a call that needs a person is refused. It shares
// the session gate's posture, so a posture change (SetPosture) reaches
// the sub-agents already running too.
func (s *Session) newChildGate() (agent.Gate, error) {
	g, err := policy.NewGate(policy.GateConfig{Policy: s.Policy, SharePosture: s.gate,
		Workdir: s.cfg.Workdir, Grants: s.cfg.Grants, Standing: s.cfg.Standing,
		ShellSandboxed: s.Confinement.ShellSandboxed(), AllowWrite: s.Confinement.Writable()[1:],
		AllowRead: append(s.Confinement.Writable()[1:], s.cfg.Settings.Sandbox.AllowRead...), HumanOnly: s.cfg.HumanOnly,
		Network: s.cfg.Settings.Sandbox.Network})
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	return g, nil
}

// addPluginTools gives a sub-agent the session's MCP tools (§3.12): the
// same servers the parent uses, through the child's own gate, and then
// narrowed by its profile like any tool — a read-only profile keeps only
// the tools whose server declares them read-only (readOnlyHint), and its
// gate still refuses any other call. A name that clashes with a built-in
// is left out.
func (s *Session) addPluginTools(tools *agent.ToolRegistry) {
	if s.plugins == nil {
		return
	}
	for _, t := range s.plugins.Tools(nil) {
		if err := tools.Add(t); err != nil {
			s.cfg.Logger.Warn("session: a plugin tool left out of a sub-agent", "tool", t.Name(), "err", err)
		}
	}
}
