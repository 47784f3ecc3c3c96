package goals

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"reasonix/agent"
	"reasonix/internal/ids"
	"reasonix/policy"
)

// Budget bounds one slice of a goal's spending. Zero fields are off. A goal
// that spends a slice stops with StatusBudget and may be resumed, which
// grants a fresh slice.
type Budget struct {
	Tokens    int           // prompt + completion tokens (`[agent] goal_token_budget`)
	Turns     int           // continuation turns (`goal_max_turns`)
	WallClock time.Duration // time spent in turns
	// USD bounds what the slice's model calls cost, the turns' and their
	// sub-agents', priced with Config.Price (`[agent] goal_budget_usd`).
	// Calls on unpriced models do not count.
	USD float64
	// Warn, between 0 and 1 exclusive, is the share of the cost, token or
	// turn budget at which a slice posts one EventBudgetWarning per budget
	// (`[runner] budget_warn`); 0 never warns.
	Warn float64
}

// Config assembles a Controller.
type Config struct {
	// Agent is the base configuration of every turn's agent. Provider is
	// required. Its Tools are copied, never changed: the controller adds the
	// goal tools (and the Host's tools) to its own registry. History is
	// ignored; the conversation lives in State.History.
	Agent agent.Config
	// Store saves the state after every turn; nil keeps it in memory only.
	Store StateStore
	// Budget bounds each slice; the zero value is no budget.
	Budget Budget
	// Price prices each model call of a turn (the Host prices its
	// children's with its own HostConfig.Price), for State.Cost and
	// Budget.USD; nil leaves every call unpriced.
	Price PriceFunc
	// StallTurns is how many consecutive turns without novel progress
	// trigger a strategy redirect; 0 means 3. A stall never blocks a goal.
	StallTurns int
	// MaxRedirects bounds redirects in a row without progress between
	// them; then the slice ends as a budget stop (resumable). 0 means 3.
	MaxRedirects int
	// Replan, when set, is the planner a redirect consults: given the goal
	// and why it stalled, it returns a fresh plan the next turn opens with.
	// An error or an empty plan leaves the redirect prompt alone. It passes
	// its usage events to observe, so the planner's tokens and cost count
	// in the goal's budgets.
	Replan func(ctx context.Context, g Goal, why string, observe agent.Observer) (string, error)
	// BlockedRepeats is how often the same blocked state (a turn that ended
	// with a refused call, compared after normalization) may recur before
	// the goal stops as blocked; 0 means 3.
	BlockedRepeats int
	// Approver decides the plans of PlanFirst goals; required for them.
	Approver PlanApprover
	// MaxPlanRounds bounds rejected plans before the goal blocks; 0 means 3.
	MaxPlanRounds int
	// Policy, when set, opens the approved-plan window after a plan is
	// approved: the writer fallback is allowed while explicit ask and deny
	// rules (and Agent.Gate) keep deciding everything else. Nil leaves
	// Agent.Gate unchanged. Workdir is the workspace for relative rules.
	Policy  *policy.Policy
	Workdir string
	// Host, when set, contributes the sub-agent tools to every executing
	// turn and its counters to the Result.
	Host *Host
	// NoDelegation is the control arm of `--ablate subagent` (seed §3.17):
	// the Host's task and fleet tools are left out, its readers and
	// counters stay, so the arm is measured the same way.
	NoDelegation bool
	// OnTurn, when set, is called with each turn's agent before the turn
	// runs and with nil after it returns, so a caller can Steer the turn in
	// progress with a requester's message. It must not block.
	OnTurn func(*agent.Agent)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID names goals without an ID; nil generates random hex ids.
	NewID func() string
}

// Controller runs goals. It holds no per-goal state, so one Controller may
// run several goals at once; each Run or Resume owns its State.
type Controller struct {
	cfg Config
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Controller, error) {
	if cfg.Agent.Provider == nil {
		return nil, errors.New("goals: config Agent.Provider is required")
	}
	if cfg.StallTurns < 0 || cfg.BlockedRepeats < 0 || cfg.MaxPlanRounds < 0 || cfg.MaxRedirects < 0 {
		return nil, errors.New("goals: StallTurns, BlockedRepeats, MaxPlanRounds and MaxRedirects must not be negative")
	}
	if cfg.Budget.Tokens < 0 || cfg.Budget.Turns < 0 || cfg.Budget.WallClock < 0 || !(cfg.Budget.USD >= 0) {
		return nil, errors.New("goals: budget fields must not be negative")
	}
	cfg.StallTurns = cmp.Or(cfg.StallTurns, 3)
	cfg.MaxRedirects = cmp.Or(cfg.MaxRedirects, 3)
	cfg.BlockedRepeats = cmp.Or(cfg.BlockedRepeats, 3)
	cfg.MaxPlanRounds = cmp.Or(cfg.MaxPlanRounds, 3)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	if cfg.Agent.Tools == nil {
		cfg.Agent.Tools = agent.NewToolRegistry()
	}
	for _, name := range []string{toolCreateGoal, toolGetGoal, toolUpdateGoal} {
		if _, dup := cfg.Agent.Tools.Get(name); dup {
			return nil, fmt.Errorf("goals: the base registry already has a %s tool; the controller provides it", name)
		}
	}
	return &Controller{cfg: cfg}, nil
}

func randomID() string { return "g-" + ids.Hex(6) }

// Result is the end of one Run or Resume.
type Result struct {
	// Outcome is how the run ended: the goal's final Status.
	Outcome Status
	// State is the goal's final state (also passed to the StateStore).
	State *State
	// FinalAnswer is the model's last answer.
	FinalAnswer string
	// FinishReason is the provider's finish reason for FinalAnswer
	// (agent.Result.FinishReason): whether the last answer hit the output
	// limit ("length") or was refused ("content_filter"), which a front
	// end reports as its stop reason.
	FinishReason string
	// Reason says why the goal stopped (see State.Reason).
	Reason string
	// Question is set for StatusQuestion and for a goal the blocked audit stopped.
	Question string
	// Counters are the Host's delegation counters (zero without a Host).
	Counters Counters
	// Err is the failure behind StatusFailed (a provider error; classify it
	// with agent.Reason) or the cause of StatusCancelled.
	Err error
}

// Run starts goal and drives it until it stops. The error is non-nil only
// when the controller itself could not go on (an invalid goal, a failing
// StateStore, a failing PlanApprover); every other end is an Outcome.
func (c *Controller) Run(ctx context.Context, goal Goal) (Result, error) {
	if err := goal.validate(); err != nil {
		return Result{}, err
	}
	if goal.PlanFirst && c.cfg.Approver == nil {
		return Result{}, errors.New("goals: a plan-first goal needs Config.Approver")
	}
	if goal.ID == "" {
		goal.ID = c.cfg.NewID()
	}
	st := &State{Version: stateVersion, Goal: goal, Status: StatusActive, Phase: PhaseExecuting, Revision: 1}
	if goal.PlanFirst {
		st.Phase = PhasePlanning
	}
	return c.drive(ctx, st, "")
}

// Resume continues a saved goal. message is what the requester said (an
// answer to a question, steering, or "" to just continue after a restart);
// it is delivered as a direct human turn, which may use every update_goal
// action. Resuming a stopped goal reactivates it: a budget stop gets a fresh
// slice, and a message starts a fresh blocked audit. A complete goal cannot
// be resumed.
func (c *Controller) Resume(ctx context.Context, st *State, message string) (Result, error) {
	if st == nil {
		return Result{}, errors.New("goals: resume needs a state")
	}
	if st.Version != stateVersion {
		return Result{}, fmt.Errorf("goals: resume: state layout version %d, want %d", st.Version, stateVersion)
	}
	if st.Status == StatusComplete {
		return Result{}, fmt.Errorf("goals: resume: goal %s is already complete", st.Goal.ID)
	}
	if st.Goal.PlanFirst && c.cfg.Approver == nil {
		return Result{}, errors.New("goals: a plan-first goal needs Config.Approver")
	}
	if st.Status == StatusBudget {
		st.Slice = Slice{}
	}
	if message != "" {
		st.AuditEpoch++
		st.StalledTurns, st.Nudged, st.RedirectsInRow = 0, false, 0
	}
	if st.Status != StatusActive {
		st.Status, st.Reason, st.Question = StatusActive, "", ""
		st.Revision++
	}
	return c.drive(ctx, st, message)
}

// drive runs the planning phase when needed, then executing turns.
func (c *Controller) drive(ctx context.Context, st *State, message string) (Result, error) {
	s := newSession(c, st)
	if err := s.save(ctx); err != nil {
		return s.result(), err
	}
	if st.Phase == PhasePlanning {
		stop, err := s.plan(ctx, message)
		if err != nil || stop {
			return s.result(), err
		}
		message = ""
	}
	return s.execute(ctx, message)
}
