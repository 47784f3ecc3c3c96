package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/internal/execute"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// Causes that stop a run early; each maps to a task state.
var (
	errToolBudget  = errors.New("runner: the task's tool-call budget is exhausted")
	errTokenBudget = errors.New("runner: the task's token budget is exhausted")
	errCostBudget  = errors.New("runner: the task's cost budget is exhausted")
	errTimeout     = errors.New("runner: the task's time budget is exhausted")
	errPersist     = errors.New("runner: the run's progress could not be saved")
)

// run is one execution of a task on this node.
type run struct {
	s      *Service
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
	// (lostchanges.go), until the conversation holds it.
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

func (r *run) poke() {
	select {
	case r.pokeCh <- struct{}{}:
	default:
	}
}

// workspaceWait is how long a task waits before trying again while its
// workspace runs as many tasks as it may (max_parallel).
const workspaceWait = 2 * time.Second

// runJob is the queue's Handler: it claims the task and runs it.
func (s *Service) runJob(ctx context.Context, job store.Job) (err error) {
	var task store.Task
	if job.Task != nil {
		task = *job.Task // read as the job started
	} else {
		task, err = s.st.Task(ctx, job.TaskID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted; nothing to run
	}
	if err != nil {
		return fmt.Errorf("runner: read task: %w", err)
	}
	if task.JobID != job.ID {
		return nil // superseded by a newer job (resume, continuation)
	}
	if s.stopping.Load() {
		// Leave the job for the next start (or another node).
		return store.Snooze(time.Second)
	}
	switch task.State {
	case store.StateQueued:
	case store.StateWaitingApproval:
		// A pending budget card holds the task; anything else that woke
		// the job waits with it.
		if wait, ok, err := s.budgetWait(ctx, task); err != nil {
			return fmt.Errorf("runner: read the budget card: %w", err)
		} else if ok {
			return store.Snooze(wait)
		}
	case store.StateRunning:
		return s.adoptRunning(ctx, task)
	case store.StateWaitingCI:
		if err := s.awaitCI(ctx, task); err != nil { // holds no workspace and runs no agent
			return err
		}
		return s.followUpIssue(ctx, task)
	default:
		// Finished, cancelled or interrupted without a resume; a job that
		// ends its task comes here again when its follow-up failed.
		return s.followUpIssue(ctx, task)
	}
	if err := s.awaitScratch(ctx, task); err != nil {
		return err
	}
	claimed, err := s.claim(ctx, task)
	if errors.Is(err, store.ErrWorkspaceBusy) {
		// The workspace runs as many tasks as it may; wait without a worker.
		return store.Snooze(workspaceWait)
	}
	if errors.Is(err, store.ErrStateConflict) {
		return nil // someone else moved it (cancelled meanwhile)
	}
	if err != nil {
		return fmt.Errorf("runner: claim task: %w", err)
	}
	if err := s.st.Heartbeat(ctx, task.ID); err != nil {
		s.log.Warn("runner: heartbeat", "task", task.ID, "err", err)
	}
	if task.State == store.StateQueued {
		s.metrics.queueWait.Observe(s.now().Sub(task.UpdatedAt).Seconds())
	}
	s.hub.Notify(task.ID)
	if err := s.execute(ctx, claimed); err != nil {
		return err
	}
	return s.followUpIssue(ctx, task)
}

// claim makes task running on this node. The claim of a scratch task
// whose directory is here waits for a hand-over of it under way
// (cluster.Scratch): the run then finds it in the store.
func (s *Service) claim(ctx context.Context, task store.Task) (store.Task, error) {
	if task.Workspace == "" && task.LeaseOwner == s.node {
		s.scratchMu.Lock()
		defer s.scratchMu.Unlock()
	}
	return s.st.ClaimTask(ctx, task.ID, []store.State{task.State}, s.node, s.maxParallel(task.Workspace), func(t store.Task) []store.EventInput {
		return s.encodeAll(t.ID, event{"task_state", map[string]any{"state": store.StateRunning, "node": s.node, "attempt": t.Attempt}})
	})
}

// maxParallel is how many tasks of workspace may run at once by this
// node's configuration: its max_parallel, by default the node's workers.
func (s *Service) maxParallel(workspace string) int {
	for _, w := range s.set.Workspaces {
		if w.Name == workspace {
			return cmp.Or(w.MaxParallel, s.maxConcurrent())
		}
	}
	return s.maxConcurrent()
}

// adoptRunning handles a job whose task is already running: after a failed
// attempt on this node the task is taken again; on another node it is left
// alone unless that node stopped proving it is alive.
func (s *Service) adoptRunning(ctx context.Context, task store.Task) error {
	if s.runFor(task.ID) != nil {
		return nil
	}
	if task.LeaseOwner != s.node {
		if rt, ok := s.staleTask(ctx, task.ID); ok {
			return s.takeOverStale(ctx, rt)
		}
		return store.Snooze(s.cfg.StaleAfter)
	}
	owner := s.node
	claimed, err := s.st.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateRunning,
		&store.StateOpts{LeaseOwner: &owner})
	if err != nil {
		return nil
	}
	if err := s.execute(ctx, claimed); err != nil {
		return err
	}
	return s.followUpIssue(ctx, task)
}

// execute runs a claimed task and records how it ended. It returns a snooze
// when the run waits for an approval, nil otherwise.
func (s *Service) execute(jobCtx context.Context, task store.Task) (err error) {
	ctx, cancel := context.WithCancelCause(jobCtx)
	defer cancel(nil)
	if !task.Goal {
		// A goal has no wall clock: its turn and cost budgets bound it,
		// and a stall changes its strategy instead of running it down.
		var stopTimer context.CancelFunc
		ctx, stopTimer = context.WithTimeoutCause(ctx, s.taskTimeout(), errTimeout)
		defer stopTimer()
	}
	r := &run{s: s, task: task, cancel: cancel, pokeCh: make(chan struct{}, 1), tally: session.NewTally(s.prices),
		events: newEventQueue(s, task.ID)}
	s.addRun(r)
	defer s.removeRun(r)
	defer r.events.Close() // before removeRun: until then other events wait for the queue
	if s.stopping.Load() { // Stop ran between the claim and addRun: hand it over
		cancel(errDrained)
	}
	start := s.now()

	var wg sync.WaitGroup
	ctlCtx, stopCtl := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.control(ctlCtx)
	}()
	stopControl := sync.OnceFunc(func() {
		stopCtl()
		wg.Wait()
		r.returnUnsteered(context.WithoutCancel(ctx))
	})
	defer stopControl()

	defer func() {
		if p := recover(); p != nil {
			ref := newRef()
			s.log.Error("runner: task panicked", "task", task.ID, "ref", ref, "panic", p, "stack", string(debug.Stack()))
			err = s.finish(context.WithoutCancel(ctx), r, nil, outcome{state: store.StateFailed, code: "internal", ref: ref}, start)
		}
	}()

	ws, err := s.cfg.Workspaces.Prepare(ctx, task.ID, s.workspaceSpec(task.Workspace))
	if err != nil {
		ref := newRef()
		s.log.Error("runner: workspace", "task", task.ID, "ref", ref, "err", err)
		if ctx.Err() != nil {
			return s.finish(context.WithoutCancel(ctx), r, nil, s.stopped(ctx), start)
		}
		if what, ok := tampered(err); ok {
			return s.finish(context.WithoutCancel(ctx), r, nil, tamperedOutcome(what, ref), start)
		}
		return s.finish(context.WithoutCancel(ctx), r, nil, outcome{state: store.StateFailed, code: "workspace", ref: ref}, start)
	}
	s.restoreScratch(ctx, task, ws) // a scratch task handed over by another node
	if o, stop, err := s.budgetAnswer(ctx, r); err != nil || stop {
		if err != nil {
			ref := newRef()
			s.log.Error("runner: reading the budget card's answer", "task", task.ID, "ref", ref, "err", err)
			o = outcome{state: store.StateFailed, code: "store", ref: ref}
		}
		stopControl()
		return s.finish(context.WithoutCancel(ctx), r, ws, o, start)
	}
	o, err := s.runSession(ctx, r, ws)
	r.settleOutcomes(context.WithoutCancel(ctx))
	stopControl() // before finish, which continues the task if messages remain
	if err != nil {
		ref := newRef()
		s.log.Error("runner: session", "task", task.ID, "ref", ref, "err", err)
		if ctx.Err() != nil {
			return s.finish(context.WithoutCancel(ctx), r, ws, s.stopped(ctx), start)
		}
		return s.finish(context.WithoutCancel(ctx), r, ws, outcome{state: store.StateFailed, code: "setup", ref: ref}, start)
	}
	return s.finish(context.WithoutCancel(ctx), r, ws, o, start)
}

// control watches, while a task runs, for a cancel request or steering
// messages (possibly posted on another node) and keeps the heartbeat.
func (r *run) control(ctx context.Context) {
	s := r.s
	tick := time.NewTicker(s.cfg.ControlInterval)
	defer tick.Stop()
	lastBeat := s.now()
	beat := func() {
		if s.now().Sub(lastBeat) >= s.cfg.HeartbeatInterval {
			lastBeat = s.now()
			if err := s.st.Heartbeat(ctx, r.task.ID); err != nil && ctx.Err() == nil {
				s.log.Warn("runner: heartbeat", "task", r.task.ID, "err", err)
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
			fresh := time.Since(r.controlSeen) < s.cfg.ControlInterval
			r.mu.Unlock()
			if fresh {
				beat()
				continue
			}
		case <-r.pokeCh:
		}
		cancelled, inbox, err := s.st.ControlState(ctx, r.task.ID)
		if err == nil && cancelled {
			r.cancel(errCancelled)
			return
		}
		r.mu.Lock()
		ag := r.ag
		r.mu.Unlock()
		if ag != nil && (inbox || err != nil) { // on an error, look anyway (TakeInbox logs)
			msgs, err := s.st.TakeInbox(ctx, r.task.ID)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("runner: read inbox", "task", r.task.ID, "err", err)
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
func (r *run) sawUserMessage(text string) {
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

// returnUnsteered puts messages that were steered into the agent but never
// reached the conversation (the run ended first) back into the inbox, so
// they continue the task instead of being lost.
func (r *run) returnUnsteered(ctx context.Context) {
	r.mu.Lock()
	left := r.steered
	r.steered = nil
	r.mu.Unlock()
	for _, m := range left {
		if _, err := r.s.st.PostMessage(ctx, r.task.ID, m.Requester, m.Text); err != nil {
			r.s.log.Error("runner: a steering message could not be returned to the inbox", "task", r.task.ID, "err", err)
		}
	}
}

// outcome is how a run ended, in the terms of the task.
type outcome struct {
	state    store.State
	code     string // short, safe error code; "" on success
	ref      string // log reference of the internal detail
	result   agent.Result
	approve  time.Time // waiting: the approval's deadline
	reason   string    // interrupted: why
	release  bool      // interrupted by a drain: hand the task to another node
	goal     *goalEnd  // goal tasks: how the goal stands
	tampered string    // the task tampered with its worktree: what changed (tampered.go)
	// budgetStopped: a budget card was answered with a stop (or expired);
	// the task ends without asking again. publish: and its branch is
	// published as a success's would be (budgetask.go).
	budgetStopped, publish bool
}

// stopped classifies a run whose context ended.
func (s *Service) stopped(ctx context.Context) outcome {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCancelled):
		return outcome{state: store.StateCancelled, code: "cancelled"}
	case errors.Is(cause, errToolBudget):
		return outcome{state: store.StateBudgetExhausted, code: "tool_budget"}
	case errors.Is(cause, errTokenBudget):
		return outcome{state: store.StateBudgetExhausted, code: "token_budget"}
	case errors.Is(cause, errCostBudget):
		return outcome{state: store.StateBudgetExhausted, code: "cost_budget"}
	case errors.Is(cause, errTimeout):
		return outcome{state: store.StateBudgetExhausted, code: "timeout"}
	case errors.Is(cause, errPersist):
		return outcome{state: store.StateFailed, code: "store"}
	case errors.Is(cause, errDrained):
		return outcome{state: store.StateInterrupted, code: "interrupted", release: true,
			reason: "the node stopped; the task continues on another node"}
	default: // shutdown, or the queue cancelled the job
		return outcome{state: store.StateInterrupted, code: "interrupted", reason: "the service stopped while this task ran"}
	}
}

func (s *Service) classify(ctx context.Context, r *run, res agent.Result) outcome {
	end := session.AgentEnd(res.Outcome)
	o := outcome{result: res, state: end.State, code: end.Code}
	switch end.State {
	case store.StateWaitingApproval:
		o.approve = s.approvalDeadline(res.Err)
	case store.StateInterrupted:
		so := s.stopped(ctx) // cancelled, a budget, or a shutdown
		so.result = res
		return so
	case store.StateFailed:
		o.code, o.ref = agent.Reason(res.Err), newRef()
		s.log.Error("runner: run failed", "task", r.task.ID, "ref", o.ref, "err", res.Err)
	}
	return o
}

// approvalDeadline is when the approval a suspended run waits for expires.
func (s *Service) approvalDeadline(err error) time.Time {
	var se *suspendError
	if errors.As(err, &se) {
		return se.approval.ExpiresAt
	}
	at, _ := s.deadlineOf(store.Task{})
	return at
}

// finish records the end of a run: the waiting state and a snooze, the
// interrupted state, or a terminal state with the workspace committed, the
// result, a final_report event and the metrics.
func (s *Service) finish(ctx context.Context, r *run, ws *Workdir, o outcome, start time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	id := r.task.ID
	if a, ok := s.parkOnBudget(ctx, r, o); ok {
		o = outcome{state: store.StateWaitingApproval, approve: a.ExpiresAt}
	}
	switch o.state {
	case store.StateWaitingApproval:
		// The spend so far is kept, so the run that continues after the
		// decision adds to it.
		spent := r.spendSoFar(ctx)
		if _, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateWaitingApproval,
			&store.StateOpts{Result: &spent, Events: s.announce(id, event{"task_state", map[string]any{"state": store.StateWaitingApproval}})}); err != nil {
			return s.lostState(ctx, id, err)
		}
		s.hub.Notify(id)
		return store.Snooze(s.parkUntil(o.approve, time.Minute))
	case store.StateInterrupted:
		if o.release {
			return s.release(ctx, r, ws, o.reason)
		}
		spent := r.spendSoFar(ctx)
		spent.Error = "interrupted"
		if _, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateInterrupted,
			&store.StateOpts{Result: &spent, Events: s.announce(id,
				event{"task_interrupted", map[string]any{"reason": o.reason}},
				event{"task_state", map[string]any{"state": store.StateInterrupted}})}); err != nil {
			return s.lostState(ctx, id, err)
		}
		s.hub.Notify(id)
		s.metrics.finished.WithLabelValues(string(store.StateInterrupted), string(r.task.Source)).Inc()
		return nil
	}

	result := new(store.Result)
	*result = r.spendSoFar(ctx)
	result.FinalAnswer = s.redact.String(o.result.FinalAnswer)
	result.Summary = s.redact.String(cmpStr(o.goal.summary(), summary(o.result.FinalAnswer)))
	result.DurationMS = s.now().Sub(start).Milliseconds()
	r.mu.Lock()
	result.Deliverables = r.deliverables
	r.mu.Unlock()
	if result.Deliverables == nil && r.task.Result != nil { // a continuation that declared none keeps the last
		result.Deliverables = r.task.Result.Deliverables
	}
	if o.code != "" {
		result.Reason = cmpStr(o.goal.blockedReason(), session.Reason(o.code))
		if o.code == "cost_budget" {
			result.Reason = s.costBudgetReason(r.tally.Cost())
			if o.budgetStopped { // no run: the card's spend is the task's
				result.Reason = s.costBudgetReason(result.Cost)
			}
		}
		result.Error = o.code
		if o.ref != "" {
			result.Error += " (ref " + o.ref + ")"
		}
	}
	var published []event
	waitCI := false
	if ws != nil { // commit even a cancelled task's work: its branch keeps it
		wr, err := s.cfg.Workspaces.Finish(ctx, ws, commitMessage(r.task.Prompt))
		if err != nil {
			ref := newRef()
			s.log.Error("runner: finishing the workspace", "task", id, "ref", ref, "err", err)
			if what, ok := tampered(err); ok {
				// Whatever the run reported, its work is refused.
				o.state, o.tampered = store.StateFailed, what
				result.Error, result.Reason = tamperedCode+" (ref "+ref+")", session.Reason(tamperedCode)
			} else if result.Error == "" {
				result.Error, result.Reason = "workspace_commit (ref "+ref+")", session.Reason("workspace_commit")
			}
		} else {
			s.checkpointed(ctx, r)
		}
		result.Branch, result.DiffStat = cmpStr(wr.Branch, ws.Branch), wr.DiffStat
		if err == nil {
			published = s.publishAtEnd(ctx, r.task, o.state, o.publish, wr, result)
			if waitCI = s.waitsForCI(r.task, o.state, result); waitCI {
				s.startCIWait(result, r.task.Result, wr.Commit)
			}
		}
	}
	if waitCI {
		// The work is done and published; CI decides how the task ends
		// (ci.go). The final report comes with that end.
		evs := append(published, ciEvent(result.PR), event{"task_state", map[string]any{"state": store.StateWaitingCI}})
		if _, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateWaitingCI,
			&store.StateOpts{Result: result, Events: s.announce(id, evs...)}); err != nil {
			return s.lostState(ctx, id, err)
		}
		s.hub.Notify(id)
		p := s.publishSettings(r.task.Workspace)
		return s.ciSnooze(result.PR.CI, p)
	}
	// The report goes just before the terminal state, with it, so whoever
	// sees that state finds the report.
	report := s.reportPayload(ctx, r.task, o.state, result)
	if o.goal != nil {
		report["goal"] = o.goal
		report["counters"] = o.goal.Counters
	}
	ends := append(published, event{"final_report", report}, event{"task_state", map[string]any{"state": o.state}})
	if o.tampered != "" {
		ends = append([]event{tamperedEvent(o.tampered)}, ends...)
	}
	t, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, o.state, &store.StateOpts{Result: result,
		Events: s.announce(id, ends...)})
	if err != nil {
		return s.lostState(ctx, id, err)
	}
	s.hub.Notify(id)
	s.finishedMetrics(t, time.Duration(result.DurationMS)*time.Millisecond)
	// A message that arrived as the run ended continues the task.
	if has, err := s.st.HasInbox(ctx, id); err == nil && has && t.State != store.StateCancelled {
		if _, err := s.st.Requeue(ctx, id, []store.State{t.State},
			s.announce(id, event{"task_state", map[string]any{"state": store.StateQueued, "reason": "continued"}})...); err == nil {
			s.hub.Notify(id)
		}
	}
	return nil
}

// reportPayload is a final_report event's payload for task t ending in
// state with result.
func (s *Service) reportPayload(ctx context.Context, t store.Task, state store.State, result *store.Result) map[string]any {
	report := map[string]any{
		"state": state, "summary": result.Summary, "final_answer": result.FinalAnswer,
		"diff_stat": result.DiffStat, "branch": result.Branch, "tokens": result.Tokens,
		"cost": result.Cost, "cost_complete": result.CostComplete, "unpriced_tokens": result.UnpricedTokens,
		"models": result.Models, "duration_ms": result.DurationMS, "error": result.Error, "reason": result.Reason,
	}
	if len(result.Deliverables) > 0 {
		report["deliverables"] = result.Deliverables
	}
	if result.Delegation != nil { // a goal's are its goal entry's (finish)
		report["counters"] = *result.Delegation
	}
	// The split is of the task's whole life, every attempt, as the API and
	// the dashboard show it; duration_ms is this run's alone.
	if d, err := s.Durations(ctx, t); err == nil {
		report["durations"] = d
	} else {
		s.log.Warn("runner: the final report goes without its durations", "task", t.ID, "err", err)
	}
	if result.Publish != "" {
		report["publish"] = result.Publish
		if result.PR != nil {
			report["pr"] = result.PR
		}
	}
	return report
}

// lostState handles a final state change that found the task moved on
// (cancelled through the store meanwhile): nothing more to do.
func (s *Service) lostState(ctx context.Context, id string, err error) error {
	if errors.Is(err, store.ErrStateConflict) {
		s.log.Info("runner: task changed state under its run", "task", id, "err", err)
		return nil
	}
	return fmt.Errorf("runner: record the end of task %s: %w", id, err)
}

func (s *Service) finishedMetrics(t store.Task, d time.Duration) {
	s.metrics.finished.WithLabelValues(string(t.State), string(t.Source)).Inc()
	if d > 0 {
		s.metrics.duration.WithLabelValues(string(t.State)).Observe(d.Seconds())
	}
}

// summary is the first paragraph of the final answer, bounded.
func summary(answer string) string {
	answer = strings.TrimSpace(answer)
	if i := strings.Index(answer, "\n\n"); i >= 0 {
		answer = answer[:i]
	}
	return truncate(answer, 500)
}

// commitMessage is the first line of the prompt, bounded.
func commitMessage(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return "reasonix: " + truncate(strings.TrimSpace(line), 72)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// spendSoFar is what the task has used over all its runs (see spent). If
// its usage events cannot be read, it is this run's tokens and priced
// calls on top of what the earlier runs recorded in the task's result.
// The budgets still count each run on its own.
//
// A task's first run (attempt 1) is all of its spend, and the run tallied
// every usage event it wrote as it went: it reads nothing back.
func (r *run) spendSoFar(ctx context.Context) (res store.Result) {
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
	res, err := r.s.spent(ctx, r.task.ID)
	if err == nil {
		return res
	}
	r.s.log.Error("runner: the task's spend is summed from this run and the last recorded result", "task", r.task.ID, "err", err)
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

// costBudgetReason says which cost budget ended the task and how to go on.
func (s *Service) costBudgetReason(spent float64) string {
	return fmt.Sprintf("cost budget $%s reached ($%.4f spent, [runner] max_cost_per_task); resume the task for a fresh budget",
		strconv.FormatFloat(s.set.Runner.MaxCostPerTask, 'f', -1, 64), spent)
}
