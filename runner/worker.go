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
	"reasonix/runner/internal/cluster"
	"reasonix/runner/internal/execute"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// errTimeout stops a run whose time budget is spent; the other causes that
// stop a run early are taskrun's. Each maps to a task state (stopped).
var errTimeout = errors.New("runner: the task's time budget is exhausted")

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
		return store.Snooze(s.cfg.SlotRetry)
	}
	if errors.Is(err, store.ErrStateConflict) {
		return nil // someone else moved it (cancelled meanwhile)
	}
	if err != nil {
		return fmt.Errorf("runner: claim task: %w", err)
	}
	if task.State == store.StateQueued {
		s.metrics.queueWait.Observe(s.now().Sub(task.UpdatedAt).Seconds())
	}
	s.hub.Notify(task.ID)
	err = s.execute(ctx, claimed)
	s.wakeWorkspaceWaiters(ctx, task.Workspace, task.ID) // its slot is free now
	if err != nil {
		return err
	}
	return s.followUpIssue(ctx, task)
}

// claim makes task running on this node, stamping its heartbeat. The
// claim of a scratch task whose directory is here waits for a hand-over
// of it under way (cluster.Scratch): the run then finds it in the store.
// The claim is of task as the job read it (its attempt): if another claim
// came in between, it is refused as busy and the job reads it again.
func (s *Service) claim(ctx context.Context, task store.Task) (store.Task, error) {
	if task.Workspace == "" && task.LeaseOwner == s.node {
		s.scratchMu.Lock()
		defer s.scratchMu.Unlock()
	}
	return s.st.ClaimTaskAt(ctx, task.ID, task.Attempt, []store.State{task.State}, s.node, s.maxParallel(task.Workspace), func(t store.Task) []store.EventInput {
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

// newRun is a run of task on this node, stopped with cancel, its step
// events going through events. It is handed what it needs of the service
// (taskrun.Host), never the service.
func (s *Service) newRun(task store.Task, cancel context.CancelCauseFunc, events *execute.EventQueue) *taskrun.Run {
	h := &taskrun.Host{Store: s.st, Log: s.log, Redact: s.redact, Settings: s.set, Prices: s.prices,
		ControlInterval: s.cfg.ControlInterval, HeartbeatInterval: s.cfg.HeartbeatInterval, Now: s.now,
		Notify: s.hub.Notify, EmitLogged: s.emitLogged, Spent: s.spent}
	if m := s.metrics; m != nil {
		h.Metrics = taskrun.Metrics{ToolCalls: m.toolCalls, Tokens: m.tokens, Cost: m.cost, Unpriced: m.unpriced}
	}
	return taskrun.New(h, task, cancel, events)
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
	r := s.newRun(task, cancel, newEventQueue(s, task.ID))
	s.addRun(r)
	defer s.removeRun(r)
	defer r.CloseEvents()  // before removeRun: until then other events wait for the queue
	if s.stopping.Load() { // Stop ran between the claim and addRun: hand it over
		cancel(cluster.ErrDrained)
	}
	start := s.now()

	var wg sync.WaitGroup
	ctlCtx, stopCtl := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Control(ctlCtx)
	}()
	stopControl := sync.OnceFunc(func() {
		stopCtl()
		wg.Wait()
		r.ReturnUnsteered(context.WithoutCancel(ctx))
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
		switch {
		case err != nil && ctx.Err() != nil:
			// The read was cut by the run's end (a drain, a cancel), not
			// by the store: the run ends as that end says.
			o = s.stopped(ctx)
		case err != nil:
			ref := newRef()
			s.log.Error("runner: reading the budget card's answer", "task", task.ID, "ref", ref, "err", err)
			o = outcome{state: store.StateFailed, code: "store", ref: ref}
		}
		stopControl()
		return s.finish(context.WithoutCancel(ctx), r, ws, o, start)
	}
	o, err := s.runSession(ctx, r, ws)
	r.SettleOutcomes(context.WithoutCancel(ctx))
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
	case errors.Is(cause, taskrun.ErrCancelled):
		return outcome{state: store.StateCancelled, code: "cancelled"}
	case errors.Is(cause, taskrun.ErrToolBudget):
		return outcome{state: store.StateBudgetExhausted, code: "tool_budget"}
	case errors.Is(cause, taskrun.ErrTokenBudget):
		return outcome{state: store.StateBudgetExhausted, code: "token_budget"}
	case errors.Is(cause, taskrun.ErrCostBudget):
		return outcome{state: store.StateBudgetExhausted, code: "cost_budget"}
	case errors.Is(cause, errTimeout):
		return outcome{state: store.StateBudgetExhausted, code: "timeout"}
	case errors.Is(cause, taskrun.ErrPersist):
		return outcome{state: store.StateFailed, code: "store"}
	case errors.Is(cause, cluster.ErrDrained):
		return outcome{state: store.StateInterrupted, code: "interrupted", release: true,
			reason: "the node stopped; the task continues on another node"}
	default: // shutdown, or the queue cancelled the job
		return outcome{state: store.StateInterrupted, code: "interrupted", reason: "the service stopped while this task ran"}
	}
}

func (s *Service) classify(ctx context.Context, r *taskrun.Run, res agent.Result) outcome {
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
		s.log.Error("runner: run failed", "task", r.Task().ID, "ref", o.ref, "err", res.Err)
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
func (s *Service) finish(ctx context.Context, r *taskrun.Run, ws *Workdir, o outcome, start time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	id := r.Task().ID
	if a, ok := s.parkOnBudget(ctx, r, o); ok {
		o = outcome{state: store.StateWaitingApproval, approve: a.ExpiresAt}
	}
	switch o.state {
	case store.StateWaitingApproval:
		// The spend so far is kept, so the run that continues after the
		// decision adds to it.
		spent := r.SpendSoFar(ctx)
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
		spent := r.SpendSoFar(ctx)
		spent.Error = "interrupted"
		if _, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateInterrupted,
			&store.StateOpts{Result: &spent, Events: s.announce(id,
				event{"task_interrupted", map[string]any{"reason": o.reason}},
				event{"task_state", map[string]any{"state": store.StateInterrupted}})}); err != nil {
			return s.lostState(ctx, id, err)
		}
		s.hub.Notify(id)
		s.metrics.finished.WithLabelValues(string(store.StateInterrupted), string(r.Task().Source)).Inc()
		return nil
	}

	result := new(store.Result)
	*result = r.SpendSoFar(ctx)
	result.FinalAnswer = s.redact.String(o.result.FinalAnswer)
	result.Summary = s.redact.String(cmpStr(o.goal.summary(), summary(o.result.FinalAnswer)))
	result.DurationMS = s.now().Sub(start).Milliseconds()
	result.Deliverables = r.Deliverables()
	if result.Deliverables == nil && r.Task().Result != nil { // a continuation that declared none keeps the last
		result.Deliverables = r.Task().Result.Deliverables
	}
	if o.code != "" {
		result.Reason = cmpStr(o.goal.blockedReason(), session.Reason(o.code))
		if o.code == "cost_budget" {
			result.Reason = s.costBudgetReason(r.Cost())
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
	waitCI, checkpoint := false, false
	if ws != nil { // commit even a cancelled task's work: its branch keeps it
		wr, err := s.cfg.Workspaces.Finish(ctx, ws, commitMessage(r.Task().Prompt))
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
			checkpoint = s.checkpointNow(r) // recorded with the state change below
		}
		result.Branch, result.DiffStat = cmpStr(wr.Branch, ws.Branch), wr.DiffStat
		if err == nil {
			published = s.publishAtEnd(ctx, r.Task(), o.state, o.publish, wr, result)
			if waitCI = s.waitsForCI(r.Task(), o.state, result); waitCI {
				s.startCIWait(result, r.Task().Result, wr.Commit)
			}
		}
	}
	if waitCI {
		// The work is done and published; CI decides how the task ends
		// (ci.go). The final report comes with that end.
		evs := append(published, ciEvent(result.PR), event{"task_state", map[string]any{"state": store.StateWaitingCI}})
		if _, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateWaitingCI,
			&store.StateOpts{Result: result, Events: s.announce(id, evs...), Checkpoint: checkpoint}); err != nil {
			return s.lostState(ctx, id, err)
		}
		s.hub.Notify(id)
		p := s.publishSettings(r.Task().Workspace)
		return s.ciSnooze(result.PR.CI, p)
	}
	// The report goes just before the terminal state, with it, so whoever
	// sees that state finds the report.
	report := s.reportPayload(ctx, r.Task(), o.state, result)
	if o.goal != nil {
		report["goal"] = o.goal
		report["counters"] = o.goal.Counters
	}
	ends := append(published, event{"final_report", report}, event{"task_state", map[string]any{"state": o.state}})
	if o.tampered != "" {
		ends = append([]event{tamperedEvent(o.tampered)}, ends...)
	}
	// A message that arrived as the run ended continues the task: the
	// change reads whether one waits (after it, no run takes one).
	var inbox bool
	t, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, o.state, &store.StateOpts{Result: result,
		Events: s.announce(id, ends...), Checkpoint: checkpoint, InboxWaiting: &inbox})
	if err != nil {
		return s.lostState(ctx, id, err)
	}
	s.hub.Notify(id)
	s.finishedMetrics(t, time.Duration(result.DurationMS)*time.Millisecond)
	if inbox && t.State != store.StateCancelled {
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

// truncate bounds s to n bytes on a rune boundary (taskrun.Truncate, which
// the run's events use too).
var truncate = taskrun.Truncate

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// costBudgetReason says which cost budget ended the task and how to go on.
func (s *Service) costBudgetReason(spent float64) string {
	return fmt.Sprintf("cost budget $%s reached ($%.4f spent, [runner] max_cost_per_task); resume the task for a fresh budget",
		strconv.FormatFloat(s.set.Runner.MaxCostPerTask, 'f', -1, 64), spent)
}
