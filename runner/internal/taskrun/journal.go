package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/internal/procgroup"
	"reasonix/runner/internal/execute"
	"reasonix/runner/store"
)

// journaledTool runs its tool behind the write-ahead journal: the call is
// recorded as started before it runs and finished after, so after a crash
// the runner knows which calls may have had an effect.
type journaledTool struct {
	agent.Tool
	r *Run
	// key names the call in the journal; nil means the parent run's
	// execute.JournalKey. Sub-agents have their own conversations, whose
	// call ids and message numbers would collide with the parent's.
	key func(callID string) string
}

// ReadOnly keeps the wrapped tool's classification.
func (j journaledTool) ReadOnly() bool { return agent.IsReadOnly(j.Tool) }

var _ agent.ReadOnlyTool = journaledTool{}

func (j journaledTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	r, s := j.r, j.r.s
	call, ok := agent.ToolCallFromContext(ctx)
	if !ok {
		return "", errors.New("the call was not run: it has no call id to journal")
	}
	r.mu.Lock()
	r.toolCalls++
	n, asst := r.toolCalls, r.lastAsst
	r.mu.Unlock()
	key := execute.JournalKey(asst, call.ID)
	if j.key != nil {
		key = j.key(call.ID)
	}
	if limit := s.Settings.Runner.MaxToolCalls; limit > 0 && n > limit {
		r.cancel(ErrToolBudget)
		return "", fmt.Errorf("the call was not run: the task's budget of %d tool calls is spent", limit)
	}
	if ctx.Err() != nil {
		return "", errNotRun
	}
	// The start goes with the assistant message that asked for the call,
	// if it is still held, and the events queued so far (step.go). It is
	// not cancelled halfway: a write that might have committed would leave
	// the run unsure what the conversation holds.
	res, err := r.writeStep(context.WithoutCancel(ctx), nil, nil, &store.JournalCall{CallID: key, Tool: j.Name(), ArgsHash: execute.ArgsHash(args), Args: string(args)})
	if err != nil {
		s.Log.Error("runner: journal start", "task", r.task.ID, "call", key, "err", err)
		if errors.Is(err, store.ErrConversationMoved) {
			r.cancel(ErrPersist)
		}
		return "", errNotJournaled
	}
	if !res.Started && !j.ReadOnly() {
		// A read-only call may be re-run after a crash; a writer may not.
		s.Log.Error("runner: journal start", "task", r.task.ID, "call", key, "err", store.ErrAlreadyStarted)
		return "", errNotJournaled
	}
	// A process the call starts is journaled with it: after a crash the
	// restarted service kills what is left of it (cluster.KillOrphans) before
	// anything resumes, so no late write lands in the workspace. The record
	// is written while the process runs rather than before the tool waits
	// for it: until then the process dies with the service anyway
	// (procgroup binds it), and a short command need not wait for a round
	// trip. The call is finished in the journal only after the record. A
	// sandbox that takes all of a command down with it (bubblewrap's pid
	// namespace, agent.ShellContained) leaves nothing to kill and reports
	// nothing, which saves a write per command.
	var reported sync.WaitGroup
	ctx = agent.ContextWithProcessReporter(ctx, func(pid int) {
		b, _ := json.Marshal(procgroup.Identify(pid))
		reported.Go(func() {
			if err := s.Store.JournalProcess(context.WithoutCancel(ctx), r.task.ID, key, string(b)); err != nil {
				s.Log.Error("runner: journal process", "task", r.task.ID, "call", key, "err", err)
			}
		})
	})
	out, runErr := j.Tool.Execute(ctx, args)
	reported.Wait()
	content := out
	if runErr != nil {
		content = "error: " + runErr.Error()
		if out != "" {
			content = out + "\n" + content
		}
	}
	outcome := store.CallOutcome{CallID: key, Result: agent.BoundResult(content, agent.MaxToolResult), IsError: runErr != nil}
	if j.key == nil {
		// The run's own conversation: the outcome is written with the tool
		// message that reports it, in the run's next step write (step.go),
		// in one commit. A crash in between leaves the call unfinished, as
		// a crash just before JournalFinish would; once the message is
		// written the transcript answers the call anyway.
		r.mu.Lock()
		if r.outcomes == nil {
			r.outcomes = map[string]store.CallOutcome{}
		}
		r.outcomes[key] = outcome
		r.mu.Unlock()
		return out, runErr
	}
	r.finishCalls(context.WithoutCancel(ctx), outcome)
	return out, runErr
}

// finishCalls records outcomes in the journal on their own.
func (r *Run) finishCalls(ctx context.Context, outcomes ...store.CallOutcome) {
	for _, o := range outcomes {
		if err := r.s.Store.JournalFinish(ctx, r.task.ID, o.CallID, o.Result, o.IsError); err != nil {
			r.s.Log.Error("runner: journal finish", "task", r.task.ID, "call", o.CallID, "err", err)
		}
	}
}

// takeOutcome removes and returns the waiting outcome of the call the
// tool message answers, if any.
func (r *Run) takeOutcome(m agent.Message) []store.CallOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := execute.JournalKey(r.lastAsst, m.ToolCallID)
	o, ok := r.outcomes[key]
	if !ok {
		return nil
	}
	delete(r.outcomes, key)
	return []store.CallOutcome{o}
}

// SettleOutcomes writes what the run holds and the outcomes no tool
// message took, when the conversation stops: one whose message could not
// be saved, say.
func (r *Run) SettleOutcomes(ctx context.Context) {
	r.flushHeld(ctx)
	r.finishCalls(ctx, r.takeHeld()...) // their messages could not be written
	r.mu.Lock()
	left := r.outcomes
	r.outcomes = nil
	r.mu.Unlock()
	for _, o := range left {
		r.finishCalls(ctx, o)
	}
}

// Journaled wraps every tool of inner in the journal.
func (r *Run) Journaled(inner *agent.ToolRegistry) (*agent.ToolRegistry, error) {
	return r.journaledAs(inner, nil)
}

// journaledAs wraps every tool of inner in the journal under key (nil: the
// parent run's keys).
func (r *Run) journaledAs(inner *agent.ToolRegistry, key func(callID string) string) (*agent.ToolRegistry, error) {
	out := agent.NewToolRegistry()
	for _, name := range inner.Names() {
		t, _ := inner.Get(name)
		if err := out.Add(journaledTool{Tool: t, r: r, key: key}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Child journals each sub-agent's tools under the child's ref (so its
// writes follow the journal's rules too) and records its steps in the
// task's log (goals.Config's Child, session.GoalConfig's).
func (r *Run) Child(ctx context.Context) func(goals.ChildSpec, *agent.ToolRegistry) (*agent.ToolRegistry, agent.Observer, error) {
	return func(spec goals.ChildSpec, inner *agent.ToolRegistry) (*agent.ToolRegistry, agent.Observer, error) {
		var turns atomic.Int64 // the child's assistant messages, numbering its calls like the parent's
		tools, err := r.journaledAs(inner, func(callID string) string {
			return fmt.Sprintf("%s/%d/%s", spec.Ref, turns.Load(), callID)
		})
		if err != nil {
			return nil, nil, err
		}
		return tools, r.childObserver(spec.Ref, func() { turns.Add(1) }), nil
	}
}

// RecoverJournal settles the calls of the conversation's last assistant
// message that have no result yet, using the journal (execute.Settle): a
// finished call gets its recorded result; a writer that started but never
// finished is reported to the model as having an unknown outcome (never
// silently re-run); a read-only call that never finished, and a call that
// never started, stay pending so Continue runs them. The synthesized tool
// messages are persisted.
func (r *Run) RecoverJournal(ctx context.Context, history []agent.Message, tools *agent.ToolRegistry) ([]agent.Message, error) {
	asstSeq, pending := execute.PendingCalls(history)
	if asstSeq == 0 {
		return history, nil
	}
	r.mu.Lock()
	r.lastAsst = asstSeq
	r.mu.Unlock()
	if len(pending) == 0 {
		return history, nil
	}
	entries, err := r.s.Store.Journal(ctx, r.task.ID)
	if err != nil {
		return nil, err
	}
	readOnly := func(name string) bool {
		t, ok := tools.Get(name)
		return ok && agent.IsReadOnly(t)
	}
	var synth []agent.Message
	for _, c := range execute.Settle(asstSeq, pending, entries, readOnly) {
		if c.Unknown {
			if err := r.s.Store.JournalFinish(ctx, r.task.ID, c.Key, c.Content, true); err != nil {
				return nil, err
			}
			r.s.EmitLogged(ctx, r.task.ID, "tool_finished", map[string]any{"call_id": c.Call.ID, "tool": c.Call.Name,
				"result": c.Content, "is_error": true, "recovered": true})
		}
		synth = append(synth, agent.Message{Role: agent.RoleTool, ToolCallID: c.Call.ID, Name: c.Call.Name, Content: c.Content})
	}
	if len(synth) == 0 {
		return history, nil
	}
	if _, err := r.s.Store.AppendMessages(ctx, r.task.ID, synth...); err != nil {
		return nil, err
	}
	history = append(history, synth...)
	r.SetStored(len(history))
	return history, nil
}
