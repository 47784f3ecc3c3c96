package goals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"reasonix/agent"
)

// errWallClock is the cancel cause of a turn that ran out of wall clock.
var errWallClock = errors.New("goals: wall-clock budget spent")

// session is one Run or Resume of a goal. Tools and the observer run on the
// agent's goroutines (read-only calls in parallel), so every access to st
// while a turn runs holds mu.
type session struct {
	c   *Controller
	cfg *Config

	mu    sync.Mutex
	st    *State
	seen  map[string]bool
	human bool // the current turn carries the requester's message

	// per turn
	report   *goalReport
	novel    bool
	refusals []string
	turnCost float64 // the turn's own calls; its sub-agents' come from the Host

	final        string
	finish       string // the final answer's finish reason
	lastTurnCost float64
	err          error
}

// hostSpent is what the Host's children have cost so far.
func (s *session) hostSpent() float64 {
	if s.cfg.Host == nil {
		return 0
	}
	return s.cfg.Host.Spent()
}

// goalReport is what update_goal recorded in the current turn.
type goalReport struct {
	action   string // complete | blocked | pause
	text     string // summary or reason
	question string
}

func newSession(c *Controller, st *State) *session {
	s := &session{c: c, cfg: &c.cfg, st: st, seen: make(map[string]bool, len(st.Seen))}
	for _, f := range st.Seen {
		s.seen[f] = true
	}
	return s
}

// registry copies the base tools accepted by keep and adds extra.
func registry(base *agent.ToolRegistry, keep func(agent.Tool) bool, extra ...agent.Tool) (*agent.ToolRegistry, error) {
	r := agent.NewToolRegistry()
	for _, n := range base.Names() {
		t, _ := base.Get(n)
		if keep == nil || keep(t) {
			if err := r.Add(t); err != nil {
				return nil, fmt.Errorf("goals: %w", err)
			}
		}
	}
	for _, t := range extra {
		if keep == nil || keep(t) {
			if err := r.Add(t); err != nil {
				return nil, fmt.Errorf("goals: %w", err)
			}
		}
	}
	return r, nil
}

// runTurn runs one user turn through a fresh agent built on the goal's
// conversation, and accounts for it.
func (s *session) runTurn(ctx context.Context, input string, reg *agent.ToolRegistry, gate agent.Gate, human bool) (agent.Result, error) {
	cfg := s.cfg.Agent
	cfg.History = s.st.History
	cfg.Tools = reg
	if gate != nil {
		cfg.Gate = gate
	}
	cfg.Observer = agent.Observers(s.observe, s.cfg.Agent.Observer)
	ag, err := agent.New(cfg)
	if err != nil {
		return agent.Result{}, fmt.Errorf("goals: %w", err)
	}
	if s.cfg.OnTurn != nil {
		s.cfg.OnTurn(ag)
		defer s.cfg.OnTurn(nil)
	}
	s.mu.Lock()
	s.report, s.novel, s.refusals, s.human, s.turnCost = nil, false, nil, human, 0
	s.mu.Unlock()
	hostSpent := s.hostSpent()

	turnCtx := ctx
	if b := s.cfg.Budget.WallClock; b > 0 {
		var cancel context.CancelFunc
		turnCtx, cancel = context.WithTimeoutCause(ctx, max(b-s.st.Slice.Active, 0), errWallClock)
		defer cancel()
	}
	start := s.cfg.Now()
	var res agent.Result
	if s.st.Suspended {
		// The last turn stopped at a call waiting for approval: continue
		// it; a requester's message joins before the next model request.
		s.st.Suspended = false
		if human {
			ag.Steer(input)
		}
		res = ag.Continue(turnCtx)
	} else {
		res = ag.Run(turnCtx, input)
	}
	elapsed := max(s.cfg.Now().Sub(start), 0)

	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.History = withoutRawResults(ag.Messages())
	tokens := res.Usage.Prompt + res.Usage.Completion
	st.Turns++
	st.Tokens += tokens
	st.Active += elapsed
	st.Slice.Turns++
	st.Slice.Tokens += tokens
	st.Slice.Active += elapsed
	s.lastTurnCost = s.turnCost + s.hostSpent() - hostSpent
	st.Cost += s.lastTurnCost
	st.Slice.Cost += s.lastTurnCost
	s.final, s.finish = res.FinalAnswer, res.FinishReason
	return res, nil
}

// withoutRawResults drops the full text of bounded tool results from the
// goal's saved conversation: the model never sees it, the transcript keeps
// it, and the state is saved after every turn.
func withoutRawResults(msgs []agent.Message) []agent.Message {
	for i := range msgs {
		msgs[i].RawContent = ""
	}
	return msgs
}

// observe watches a turn's events for the plan, novel progress and refusals.
func (s *session) observe(e agent.Event) {
	switch e.Type {
	case agent.EventUsage:
		if usd := priceEvent(s.cfg.Price, e); usd > 0 {
			s.mu.Lock()
			s.turnCost += usd
			s.mu.Unlock()
		}
	case agent.EventPlanUpdated:
		s.mu.Lock()
		s.setPlan(e.Plan)
		s.mu.Unlock()
	case agent.EventToolRefused:
		if e.Verdict != nil {
			s.mu.Lock()
			s.refusals = append(s.refusals, e.Call.Name+": "+e.Verdict.Reason)
			s.mu.Unlock()
		}
	case agent.EventToolFinished:
		if e.Call == nil || e.IsError {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch e.Call.Name {
		case "todo_write":
			var a struct {
				Todos []agent.TodoItem `json:"todos"`
			}
			if json.Unmarshal([]byte(e.Call.Arguments), &a) == nil {
				s.setPlan(a.Todos)
			}
		case toolCreateGoal, toolGetGoal, toolUpdateGoal:
			// Talking about the goal is not progress toward it.
		default:
			sum := sha256.Sum256([]byte(e.Call.Name + "\x00" + e.Call.Arguments + "\x00" + e.Result))
			fp := hex.EncodeToString(sum[:12])
			if !s.seen[fp] {
				s.seen[fp] = true
				s.st.Seen = append(s.st.Seen, fp)
				s.novel = true
			}
		}
	}
}

// setPlan replaces the plan; an item newly completed is novel progress.
// Rewording the plan is not. The caller holds mu.
func (s *session) setPlan(plan []agent.TodoItem) {
	done := map[string]bool{}
	for _, it := range s.st.Plan {
		if it.Status == "completed" {
			done[it.Content] = true
		}
	}
	for _, it := range plan {
		if it.Status == "completed" && !done[it.Content] {
			s.novel = true
		}
	}
	s.st.Plan = append([]agent.TodoItem(nil), plan...)
}

// stop ends the goal with status and reason.
func (s *session) stop(status Status, reason string) {
	s.st.Status, s.st.Reason = status, reason
	s.st.Revision++
}

// budgetSpent names the budget the current slice has used up, or "".
func (s *session) budgetSpent() string {
	b, sl := s.cfg.Budget, s.st.Slice
	switch {
	case b.Tokens > 0 && sl.Tokens >= b.Tokens:
		return fmt.Sprintf("token budget spent (%d of %d tokens)", sl.Tokens, b.Tokens)
	case b.Turns > 0 && sl.Turns >= b.Turns:
		return fmt.Sprintf("turn budget spent (%d of %d turns)", sl.Turns, b.Turns)
	case b.WallClock > 0 && sl.Active >= b.WallClock:
		return fmt.Sprintf("wall-clock budget spent (%s of %s)", sl.Active.Round(time.Second), b.WallClock)
	}
	if spent := costBudgetSpent(b.USD, sl.Cost); spent != "" {
		return spent
	}
	return ""
}

// save hands the state to the store. A cancelled run is still saved.
func (s *session) save(ctx context.Context) error {
	if s.cfg.Store == nil {
		return nil
	}
	if err := s.cfg.Store.SaveGoal(context.WithoutCancel(ctx), s.st); err != nil {
		return fmt.Errorf("goals: saving goal %s: %w", s.st.Goal.ID, err)
	}
	return nil
}

func (s *session) emit(e agent.Event) {
	if s.cfg.Agent.Observer != nil {
		s.cfg.Agent.Observer(e)
	}
}

func (s *session) emitUpdate() {
	st := s.st
	s.emit(agent.Event{Type: EventGoalUpdated, Data: GoalUpdate{GoalID: st.Goal.ID, Revision: st.Revision,
		Status: st.Status, Turns: st.Turns, Tokens: st.Tokens, Cost: st.Cost, TurnCost: s.lastTurnCost, Reason: st.Reason}})
	s.lastTurnCost = 0 // an update without a turn (a stop) cost nothing
	if st.Status == StatusQuestion || st.Question != "" && st.Status == StatusBlocked {
		s.emit(agent.Event{Type: EventQuestion, Data: Question{GoalID: st.Goal.ID, Question: st.Question, Reason: st.Reason}})
	}
}

func (s *session) result() Result {
	r := Result{Outcome: s.st.Status, State: s.st, FinalAnswer: s.final, FinishReason: s.finish, Reason: s.st.Reason, Question: s.st.Question, Err: s.err}
	if s.cfg.Host != nil {
		r.Counters = s.cfg.Host.Counters()
	}
	return r
}

// input builds a turn's user message: the goal block, host notices, then the
// requester's message or the continuation prompt.
func (s *session) input(message, instruction string) string {
	var b strings.Builder
	b.WriteString(s.st.block())
	for _, n := range s.st.Notices {
		b.WriteString("\n\n<notice>\n" + n + "\n</notice>")
	}
	s.st.Notices = nil
	if message != "" {
		b.WriteString("\n\nMessage from the requester:\n" + message)
	}
	if instruction != "" {
		b.WriteString("\n\n" + instruction)
	}
	return b.String()
}
