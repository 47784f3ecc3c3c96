package agent

import (
	"context"
	"errors"
	"time"
)

// ErrSuspend, wrapped in an error a Gate returns, suspends the run instead
// of failing it: the call is waiting for something outside the process (a
// person's approval). The run stops before that call; Continue resumes it
// later, asking the gate again about exactly the same call.
var ErrSuspend = errors.New("agent: run suspended")

// Steer queues a message from the requester; it is added to the
// conversation before the next model request of a running Run or Continue.
// It is safe to call from any goroutine.
func (a *Agent) Steer(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.steered = append(a.steered, text)
}

// Continue resumes a conversation restored through Config.History without a
// new user message: calls of the last assistant message that have no result
// yet run first (gated again), then the loop goes on. A conversation whose
// last message is a final answer has nothing to continue and succeeds at once.
func (a *Agent) Continue(ctx context.Context) Result {
	start := time.Now()
	res := a.resume(ctx)
	res.Duration = time.Since(start)
	a.cfg.Observer(Event{Type: EventRunFinished, Step: res.Steps, Outcome: res.Outcome, Text: res.FinalAnswer})
	return res
}

func (a *Agent) resume(ctx context.Context) Result {
	var res Result
	pending, last := a.pendingCalls()
	if last != nil && len(last.ToolCalls) == 0 {
		res.Outcome, res.FinalAnswer = OutcomeSucceeded, last.Content
		return res
	}
	if len(pending) > 0 {
		res.ToolCalls += len(pending)
		if stop, ok := a.executeAndCheck(ctx, &res, pending); !ok {
			return stop
		}
	}
	return a.loop(ctx, res)
}

// pendingCalls returns the calls of the last assistant message that have no
// tool message yet, and that assistant message when it is the last message
// apart from tool results.
func (a *Agent) pendingCalls() ([]ToolCall, *Message) {
	answered := map[string]bool{}
	for i := len(a.messages) - 1; i >= 0; i-- {
		m := &a.messages[i]
		switch m.Role {
		case RoleTool:
			answered[m.ToolCallID] = true
			continue
		case RoleCheckpoint: // compress folds while its call runs
			continue
		case RoleAssistant:
			var pending []ToolCall
			for _, c := range m.ToolCalls {
				if !answered[c.ID] {
					pending = append(pending, c)
				}
			}
			return pending, m
		}
		return nil, nil
	}
	return nil, nil
}

func (a *Agent) takeSteered(ctx context.Context, step int) {
	a.mu.Lock()
	msgs := a.steered
	a.steered = nil
	a.mu.Unlock()
	for _, text := range msgs {
		if focus, ok := ParseCompactCommand(text); ok {
			a.compactAsked, a.compactFocus = true, focus // before the next request (prompt)
			continue
		}
		a.appendMessage(step, Message{Role: RoleUser, Content: a.recall(ctx, text)})
	}
}

// recall appends to a user message what Config.Recall finds for it.
func (a *Agent) recall(ctx context.Context, text string) string {
	if a.cfg.Recall == nil {
		return text
	}
	if note := a.cfg.Recall(ctx, text); note != "" {
		return text + "\n\n" + note
	}
	return text
}
