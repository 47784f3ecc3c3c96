// Package taskrun is one execution of a task on this node: the run's own
// state, the control loop that watches it (cancel, steering, heartbeat),
// the observer that persists each step as it happens (one store write per
// step), the write-ahead journal around its tools, its sub-agents' steps
// and its spend and budgets.
//
// It is handed what it needs (Host: the store, the log, the settings,
// metrics and a few callbacks), never the Service, and never imports the
// runner root: the root claims the task, assembles the session around a
// Run and records how it ended (internal/layering holds it to that).
package taskrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/redact"
	"reasonix/runner/internal/execute"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// Causes that stop a run early; the root maps each to a task state.
var (
	ErrToolBudget  = errors.New("runner: the task's tool-call budget is exhausted")
	ErrTokenBudget = errors.New("runner: the task's token budget is exhausted")
	ErrCostBudget  = errors.New("runner: the task's cost budget is exhausted")
	ErrPersist     = errors.New("runner: the run's progress could not be saved")
	// ErrCancelled is the cause of a run stopped by a cancel request
	// (Service.Cancel, or one the control loop reads from the store).
	ErrCancelled = errors.New("runner: the task was cancelled")
)

// Host is what a run is handed by the service that runs it.
type Host struct {
	Store    *store.Store
	Log      *slog.Logger
	Redact   *redact.Redactor // secrets masked in what is stored
	Settings *config.Config   // the budgets of [runner]
	Prices   *session.Prices  // every model call priced with its own model's prices
	Metrics  Metrics
	// ControlInterval is how often the control loop looks for a cancel
	// request or steering messages; HeartbeatInterval how often it proves
	// the task's node alive.
	ControlInterval, HeartbeatInterval time.Duration
	Now                                func() time.Time
	// Notify tells the task's event subscribers on this node that its log
	// grew.
	Notify func(taskID string)
	// EmitLogged writes an event directly (after the run's queued ones).
	EmitLogged func(ctx context.Context, taskID, typ string, payload any)
	// Spent is the task's spend over all its runs, from its usage events.
	Spent func(ctx context.Context, taskID string) (store.Result, error)
}

// Metrics are the service's counters a run adds to.
type Metrics struct {
	ToolCalls, Tokens, Cost, Unpriced *prometheus.CounterVec
}

// Run is one execution of a task on this node.
type Run struct {
	s      *Host
	task   store.Task
	cancel context.CancelCauseFunc
	pokeCh chan struct{}

	mu        sync.Mutex
	ag        *agent.Agent
	steered   []store.InboxMessage // taken from the inbox, not yet seen in the conversation
	usage     agent.Usage
	tally     *session.Tally // cost by model
	toolCalls int
	warned    map[string]bool // budgets whose budget_warn share this run crossed (warnBudget)
	lastAsst  int64           // message seq of the latest assistant message
	// outcomes are the conversation's finished calls whose journal entry
	// waits for their tool message, to be written with it (journaledTool).
	outcomes map[string]store.CallOutcome
	// lostNote is the note naming calls whose changes the workspace lost
	// (cluster.LostNote), until the conversation holds it.
	lostNote string
	// controlSeen is when a step write last read the task's control state
	// (cancel, inbox) and found nothing to do: the control loop need not
	// poll within ControlInterval of it.
	controlSeen time.Time
	// deliverables are the files the model last declared with present.
	deliverables []agent.Deliverable
	delegation   func() goals.Counters // the task's delegation counters (delegation.go)

	events *execute.EventQueue // the step events, written behind the run

	stepMu sync.Mutex // one step write at a time, in order (step.go)
	// held are messages waiting for the next step write: assistant
	// messages for their first call's journal start, tool messages (with
	// their calls' outcomes, heldDone) for the next call or answer.
	held     []agent.Message
	heldDone []store.CallOutcome
	linger   *time.Timer // writes held tool results StepLinger after the first
	stored   int64       // messages in the stored conversation
}

// New is a run of task, stopped with cancel, whose step events go through
// events (nil: each is written directly).
func New(h *Host, task store.Task, cancel context.CancelCauseFunc, events *execute.EventQueue) *Run {
	return &Run{s: h, task: task, cancel: cancel, pokeCh: make(chan struct{}, 1), tally: session.NewTally(h.Prices),
		events: events}
}

// Task is the task as the run claimed it.
func (r *Run) Task() store.Task { return r.task }

// Cancel stops the run with cause.
func (r *Run) Cancel(cause error) { r.cancel(cause) }

// FlushEvents writes the run's queued step events now, so an event
// written directly comes after them.
func (r *Run) FlushEvents() {
	if r.events != nil {
		r.events.Flush()
	}
}

// CloseEvents writes the queued step events and stops the queue; later
// events are written directly.
func (r *Run) CloseEvents() {
	if r.events != nil {
		r.events.Close()
	}
}

// SetAgent names the agent that runs the conversation, for steering.
func (r *Run) SetAgent(ag *agent.Agent) {
	r.mu.Lock()
	r.ag = ag
	r.mu.Unlock()
}

// SetLostNote records the note on lost changes the conversation is to
// receive (see LostNoteUntold).
func (r *Run) SetLostNote(note string) {
	r.mu.Lock()
	r.lostNote = note
	r.mu.Unlock()
}

// LostNoteUntold reports whether the note on lost changes has not reached
// the conversation yet.
func (r *Run) LostNoteUntold() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lostNote != ""
}

// Deliverables are the files the model last declared, nil when none.
func (r *Run) Deliverables() []agent.Deliverable {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deliverables
}

// Cost is the USD of this run's priced model calls.
func (r *Run) Cost() float64 { return r.tally.Cost() }

// Poke wakes the control loop to read the task's control state now.
func (r *Run) Poke() {
	select {
	case r.pokeCh <- struct{}{}:
	default:
	}
}

// Control watches, while a task runs, for a cancel request or steering
// messages (possibly posted on another node) and keeps the heartbeat.
func (r *Run) Control(ctx context.Context) {
	s := r.s
	tick := time.NewTicker(s.ControlInterval)
	defer tick.Stop()
	lastBeat := s.Now()
	beat := func() {
		if s.Now().Sub(lastBeat) >= s.HeartbeatInterval {
			lastBeat = s.Now()
			if err := s.Store.Heartbeat(ctx, r.task.ID); err != nil && ctx.Err() == nil {
				s.Log.Warn("runner: heartbeat", "task", r.task.ID, "err", err)
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// A step write read the control state lately (writeStep): no
			// poll, only the heartbeat.
			r.mu.Lock()
			fresh := time.Since(r.controlSeen) < s.ControlInterval
			r.mu.Unlock()
			if fresh {
				beat()
				continue
			}
		case <-r.pokeCh:
		}
		cancelled, inbox, err := s.Store.ControlState(ctx, r.task.ID)
		if err == nil && cancelled {
			r.cancel(ErrCancelled)
			return
		}
		r.mu.Lock()
		ag := r.ag
		r.mu.Unlock()
		if ag != nil && (inbox || err != nil) { // on an error, look anyway (TakeInbox logs)
			msgs, err := s.Store.TakeInbox(ctx, r.task.ID)
			if err != nil && ctx.Err() == nil {
				s.Log.Warn("runner: read inbox", "task", r.task.ID, "err", err)
			}
			for _, m := range msgs {
				r.mu.Lock()
				r.steered = append(r.steered, m)
				r.mu.Unlock()
				ag.Steer(m.Text)
			}
		}
		beat()
	}
}

// sawUserMessage notes that a steered message joined the conversation.
func (r *Run) sawUserMessage(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lostNote != "" && strings.Contains(text, r.lostNote) {
		r.lostNote = ""
	}
	for i, m := range r.steered {
		if m.Text == text {
			r.steered = append(r.steered[:i], r.steered[i+1:]...)
			return
		}
	}
}

// ReturnUnsteered puts messages that were steered into the agent but never
// reached the conversation (the run ended first) back into the inbox, so
// they continue the task instead of being lost.
func (r *Run) ReturnUnsteered(ctx context.Context) {
	r.mu.Lock()
	left := r.steered
	r.steered = nil
	r.mu.Unlock()
	for _, m := range left {
		if _, err := r.s.Store.PostMessage(ctx, r.task.ID, m.Requester, m.Text); err != nil {
			r.s.Log.Error("runner: a steering message could not be returned to the inbox", "task", r.task.ID, "err", err)
		}
	}
}

// SpendSoFar is what the task has used over all its runs (Host.Spent). If
// its usage events cannot be read, it is this run's tokens and priced
// calls on top of what the earlier runs recorded in the task's result.
// The budgets still count each run on its own.
//
// A task's first run (attempt 1) is all of its spend, and the run tallied
// every usage event it wrote as it went: it reads nothing back.
func (r *Run) SpendSoFar(ctx context.Context) (res store.Result) {
	defer func() { res.Delegation = r.delegationSoFar() }()
	own := func() store.Result {
		r.mu.Lock()
		res := store.Result{Tokens: r.usage}
		r.mu.Unlock()
		r.tally.Fill(&res)
		return res
	}
	if r.task.Attempt == 1 {
		return own()
	}
	res, err := r.s.Spent(ctx, r.task.ID)
	if err == nil {
		return res
	}
	r.s.Log.Error("runner: the task's spend is summed from this run and the last recorded result", "task", r.task.ID, "err", err)
	res = own()
	prev := r.task.Result
	if prev == nil {
		return res
	}
	res.Tokens = res.Tokens.Add(prev.Tokens)
	res.Cost += prev.Cost
	res.UnpricedTokens += prev.UnpricedTokens
	res.CostComplete = res.UnpricedTokens == 0
	for name, m := range prev.Models {
		if res.Models == nil {
			res.Models = map[string]store.ModelCost{}
		}
		cur, ok := res.Models[name]
		cur.Calls += m.Calls
		cur.Tokens = cur.Tokens.Add(m.Tokens)
		cur.Cost += m.Cost
		cur.Priced = m.Priced && (!ok || cur.Priced)
		res.Models[name] = cur
	}
	return res
}

// Truncate bounds s to n bytes, cut on a rune boundary, with an ellipsis
// when it was cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
