package taskrun

import (
	"context"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// maxEventText bounds tool arguments and results copied into events; the
// full result lives in the journal and the transcript.
const maxEventText = 2 << 10

// Observer persists a run as it happens: every message appended to the
// conversation goes to the transcript (so a later run rebuilds it), every
// other step becomes an event a chat relay can render. Text deltas are not
// stored; the assistant message that follows carries the whole text. A
// message that cannot be saved stops the run: continuing it would make a
// conversation that cannot be resumed.
func (r *Run) Observer(ctx context.Context) agent.Observer {
	s, id := r.s, r.task.ID
	pctx := context.WithoutCancel(ctx) // persist even what a cancelled run says last
	return func(e agent.Event) {
		switch e.Type {
		case agent.EventTextDelta, agent.EventToolProgress:
			return
		case agent.EventMessage:
			m := redactMessage(s.Redact, *e.Message)
			if m.Role == agent.RoleAssistant && len(m.ToolCalls) > 0 {
				// Written with its first call's journal start (step.go).
				seq := r.holdAssistant(m)
				r.mu.Lock()
				r.lastAsst = seq
				r.mu.Unlock()
			} else if r.holdable(m) {
				// Written with the next step (step.go).
				var done []store.CallOutcome
				if m.Role == agent.RoleTool {
					done = r.takeOutcome(m)
				}
				r.holdMessage(pctx, m, done)
			} else {
				var done []store.CallOutcome
				if m.Role == agent.RoleTool {
					done = r.takeOutcome(m)
				}
				res, err := r.writeStep(pctx, []agent.Message{m}, done, nil)
				if err != nil {
					s.Log.Error("runner: saving a message failed", "task", id, "err", err)
					r.cancel(ErrPersist)
					r.finishCalls(pctx, done...)
					return
				}
				for _, key := range res.Missed {
					s.Log.Error("runner: journal finish: no unfinished entry", "task", id, "call", key)
				}
				if m.Role == agent.RoleAssistant {
					r.mu.Lock()
					r.lastAsst = res.Seq
					r.mu.Unlock()
				}
			}
			if e.Message.Role == agent.RoleUser {
				r.sawUserMessage(e.Message.Content)
			}
			if e.Message.Role == agent.RoleAssistant {
				if e.Message.Content != "" {
					r.Emit("message", map[string]any{"role": "assistant", "step": e.Step, "text": Truncate(e.Message.Content, 8<<10)})
				}
			}
		case agent.EventToolStarted:
			s.Metrics.ToolCalls.WithLabelValues(e.Call.Name).Inc()
			r.Emit("tool_started", map[string]any{"step": e.Step, "call_id": e.Call.ID, "tool": e.Call.Name,
				"args": Truncate(e.Call.Arguments, maxEventText)})
		case agent.EventToolFinished:
			r.Emit("tool_finished", map[string]any{"step": e.Step, "call_id": e.Call.ID, "tool": e.Call.Name,
				"result": Truncate(e.Result, maxEventText), "is_error": e.IsError})
		case agent.EventToolRefused:
			r.Emit("tool_refused", map[string]any{"step": e.Step, "call_id": e.Call.ID, "tool": e.Call.Name,
				"code": e.Verdict.Code, "reason": e.Verdict.Reason})
		case agent.EventPlanUpdated:
			r.Emit("plan_updated", map[string]any{"plan": e.Plan})
		case agent.EventUsage:
			r.Emit("usage", r.addUsage(e, map[string]any{"step": e.Step}))
		case agent.EventRetry:
			r.Emit("retry", map[string]any{"step": e.Step, "reason": Truncate(e.Text, maxEventText)})
		case agent.EventContextCompacted:
			c := e.Compaction
			r.Emit(string(e.Type), map[string]any{"step": e.Step, "mode": c.Mode, "reason": Truncate(c.Reason, maxEventText),
				"before_tokens": c.BeforeTokens, "after_tokens": c.AfterTokens, "window": c.Window, "trigger": c.Trigger,
				"folded_messages": c.Folded, "user_turns_kept": c.KeptTurns, "user_turns_dropped": c.DroppedTurns,
				"source": c.Source, "warning": Truncate(c.Warning, maxEventText)})
		case agent.EventDeliverables:
			list := make([]agent.Deliverable, len(e.Deliverables))
			for i, d := range e.Deliverables {
				d.Path, d.Description = s.Redact.String(d.Path), s.Redact.String(d.Description)
				list[i] = d
			}
			r.mu.Lock()
			r.deliverables = list
			r.mu.Unlock()
			r.Emit("deliverables", map[string]any{"step": e.Step, "deliverables": list})
		case agent.EventRunFinished:
			r.Emit("run_finished", map[string]any{"step": e.Step, "outcome": e.Outcome})
		case goals.EventGoalUpdated, goals.EventQuestion, goals.EventPlanApproval, goals.EventFleetUpdated,
			goals.EventSubagentStarted, goals.EventSubagentFinished, goals.EventRedirect, goals.EventBudgetWarning, session.EventInstructions,
			session.EventPhaseDetail:
			// The goals package's payloads are the events: a chat relay
			// reads the question, the plan or the fleet graph directly.
			r.Emit(string(e.Type), e.Data)
		default:
			r.Emit(string(e.Type), map[string]any{"step": e.Step, "text": Truncate(e.Text, maxEventText), "data": e.Data})
		}
	}
}

// Emit queues a step event of the run (see execute.EventQueue).
func (r *Run) Emit(typ string, payload any) {
	if r.events == nil {
		r.s.EmitLogged(context.Background(), r.task.ID, typ, payload)
		return
	}
	r.events.Add(typ, payload)
}

// redactMessage masks secrets in every text of m that is stored: the
// visible content, a giant tool result's full text and a checkpoint's
// pinned turns.
func redactMessage(r interface{ String(string) string }, m agent.Message) agent.Message {
	m.Content = r.String(m.Content)
	m.RawContent = r.String(m.RawContent)
	if cp := m.Checkpoint; cp != nil {
		c := *cp
		c.Task = r.String(c.Task)
		c.Kept = make([]string, len(cp.Kept))
		for i, k := range cp.Kept {
			c.Kept[i] = r.String(k)
		}
		c.Failures = make([]string, len(cp.Failures))
		for i, f := range cp.Failures {
			c.Failures[i] = r.String(f)
		}
		m.Checkpoint = &c
	}
	return m
}

// addUsage counts one model call's tokens and prices it with its own
// model's prices, completes the usage event's payload (the model, its
// tokens and cost: null when the model has no prices), and stops the run
// when the task's token budget ([runner] max_tokens) or cost budget
// (max_cost_per_task) is spent.
func (r *Run) addUsage(e agent.Event, payload map[string]any) map[string]any {
	u := *e.Usage
	m := r.s.Metrics
	m.Tokens.WithLabelValues("prompt").Add(float64(u.Prompt))
	m.Tokens.WithLabelValues("completion").Add(float64(u.Completion))
	m.Tokens.WithLabelValues("cached").Add(float64(u.Cached))
	usd, priced := r.tally.Add(e.Model, u)
	payload["model"], payload["prompt"], payload["completion"], payload["cached"] = e.Model, u.Prompt, u.Completion, u.Cached
	if e.Effort != "" {
		payload["effort"] = e.Effort
	}
	payload["cost"] = nil
	if priced {
		payload["cost"] = usd
		m.Cost.WithLabelValues(e.Model).Add(usd)
	} else {
		m.Unpriced.WithLabelValues(e.Model).Add(float64(u.Prompt + u.Completion))
	}
	r.mu.Lock()
	r.usage = r.usage.Add(u)
	total := r.usage.Prompt + r.usage.Completion
	r.mu.Unlock()
	if limit := r.s.Settings.Runner.MaxTokens; limit > 0 && total >= limit {
		r.cancel(ErrTokenBudget)
	} else if limit > 0 {
		r.warnBudget("tokens", float64(limit), float64(total))
	}
	if limit, cost := r.s.Settings.Runner.MaxCostPerTask, r.tally.Cost(); limit > 0 && cost >= limit {
		r.cancel(ErrCostBudget)
	} else if limit > 0 {
		r.warnBudget("cost", limit, cost)
	}
	return payload
}

// childObserver records a sub-agent's steps in the task's log, tagged with
// the child's ref. Its messages stay out of the task's transcript (that is
// the parent's conversation, which a later run rebuilds), and so do its plan
// and its own end (subagent_finished reports it). Its tokens count against
// the task's budget. It is called concurrently for children running at once.
func (r *Run) childObserver(ref string, sawAssistant func()) agent.Observer {
	s := r.s
	return func(e agent.Event) {
		switch e.Type {
		case agent.EventMessage:
			if e.Message.Role == agent.RoleAssistant {
				sawAssistant()
			}
		case agent.EventToolStarted:
			s.Metrics.ToolCalls.WithLabelValues(e.Call.Name).Inc()
			r.Emit("tool_started", map[string]any{"subagent": ref, "step": e.Step, "call_id": e.Call.ID,
				"tool": e.Call.Name, "args": Truncate(e.Call.Arguments, maxEventText)})
		case agent.EventToolFinished:
			r.Emit("tool_finished", map[string]any{"subagent": ref, "step": e.Step, "call_id": e.Call.ID,
				"tool": e.Call.Name, "result": Truncate(e.Result, maxEventText), "is_error": e.IsError})
		case agent.EventToolRefused:
			r.Emit("tool_refused", map[string]any{"subagent": ref, "step": e.Step, "call_id": e.Call.ID,
				"tool": e.Call.Name, "code": e.Verdict.Code, "reason": e.Verdict.Reason})
		case agent.EventUsage:
			r.Emit("usage", r.addUsage(e, map[string]any{"subagent": ref, "step": e.Step}))
		case agent.EventRetry:
			r.Emit("retry", map[string]any{"subagent": ref, "step": e.Step, "reason": Truncate(e.Text, maxEventText)})
		case agent.EventContextCompacted:
			c := e.Compaction
			r.Emit(string(e.Type), map[string]any{"subagent": ref, "step": e.Step, "mode": c.Mode,
				"reason": Truncate(c.Reason, maxEventText), "before_tokens": c.BeforeTokens, "after_tokens": c.AfterTokens,
				"window": c.Window, "trigger": c.Trigger, "folded_messages": c.Folded})
		}
	}
}

// warnBudget records, once per run and budget, that the run's spend of
// budget ("cost" or "tokens", whose limit is limit) crossed [runner]
// budget_warn of it: a budget_warning event, which the chat relay posts.
// A run that reaches the limit itself stops instead (a budget card asks
// when the task has a notify target), so the warning comes before it.
func (r *Run) warnBudget(budget string, limit, spent float64) {
	share := r.s.Settings.Runner.BudgetWarn
	if share <= 0 || share >= 1 || spent < share*limit {
		return
	}
	r.mu.Lock()
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	done := r.warned[budget]
	r.warned[budget] = true
	r.mu.Unlock()
	if !done {
		r.Emit("budget_warning", map[string]any{"budget": budget, "limit": limit, "spent": spent, "share": share})
	}
}
