package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// outcome of one tool call, kept in call order.
type callResult struct {
	content string
	raw     string  // the full result when content had to be bounded
	images  []Image // attached by the tool (AttachImage)
	refused bool
}

// execute runs one batch of tool calls and appends one tool message per call
// in the order the model asked. Consecutive read-only calls run in parallel;
// writers run alone, in order. It returns how many calls were refused, and an
// error when the gate failed or suspended the run. On suspension only the
// calls that ran before it get tool messages, so Continue can pick up the
// rest.
func (a *Agent) execute(ctx context.Context, step int, calls []ToolCall) (int, error) {
	results := make([]callResult, len(calls))
	var gateErr error
	done := len(calls)
	for i := 0; i < len(calls); {
		if gateErr != nil || ctx.Err() != nil {
			results[i] = callResult{content: "not run: the run was stopped before this call"}
			i++
			continue
		}
		j := i
		for j < len(calls) && a.readOnly(calls[j]) {
			j++
		}
		if j == i {
			j = i + 1 // a writer: a batch of one
		}
		gateErr = a.runBatch(ctx, step, calls[i:j], results[i:j])
		if errors.Is(gateErr, ErrSuspend) {
			done = i
			break
		}
		i = j
	}
	if gateErr == nil && done == len(calls) {
		// Only a whole batch counts: a suspended one is finished later.
		gateErr = a.storm.observe(calls, results)
	}
	refused := 0
	for i, c := range calls[:done] {
		if results[i].refused {
			refused++
		}
		r := &results[i]
		if len(r.images) > 0 {
			a.holdsImages = true
		}
		a.appendMessage(step, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: r.content, RawContent: r.raw, Images: r.images})
	}
	return refused, gateErr
}

func (a *Agent) readOnly(c ToolCall) bool {
	t, ok := a.cfg.Tools.Get(c.Name)
	return ok && IsReadOnly(t)
}

// runBatch authorizes every call of the batch in order, then runs the allowed
// ones, in parallel when there are several (only read-only batches have more
// than one call).
func (a *Agent) runBatch(ctx context.Context, step int, calls []ToolCall, results []callResult) error {
	allowed := make([]Tool, len(calls))
	args := make([]json.RawMessage, len(calls))
	for i, c := range calls {
		t, ok := a.cfg.Tools.Get(c.Name)
		if !ok {
			results[i].content = fmt.Sprintf("error: unknown tool %q; available tools: %s", c.Name, strings.Join(a.cfg.Tools.Names(), ", "))
			continue
		}
		raw, err := normalizeArgs(c.Arguments)
		if err != nil {
			results[i].content = fmt.Sprintf("error: the arguments of %s are not a valid JSON object (%v); the tool did not run, fix the arguments and call it again", c.Name, err)
			continue
		}
		args[i] = raw
		v, err := a.cfg.Gate.Authorize(ctx, Call{ID: c.ID, Tool: c.Name, ReadOnly: IsReadOnly(t), Args: raw})
		if err != nil {
			if errors.Is(err, ErrSuspend) {
				return err // nothing of this batch has run yet
			}
			if ctx.Err() != nil {
				results[i].content = "not run: the run was stopped"
				return nil
			}
			results[i] = callResult{content: "refused: the permission check failed; the call did not run", refused: true}
			return fmt.Errorf("agent: authorizing %s: %w", c.Name, err)
		}
		if !v.Allowed {
			call := c
			a.cfg.Observer(Event{Type: EventToolRefused, Step: step, Call: &call, Verdict: &v})
			results[i] = callResult{content: refusalText(c.Name, v), refused: true}
			continue
		}
		allowed[i] = t
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, a.cfg.MaxParallelReads)
	for i, t := range allowed {
		if t == nil {
			continue
		}
		if len(calls) == 1 {
			results[i].content, results[i].raw, results[i].images = a.invoke(ctx, step, calls[i], t, args[i])
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].content, results[i].raw, results[i].images = a.invoke(ctx, step, calls[i], t, args[i])
		}()
	}
	wg.Wait()
	return nil
}

// invoke runs one allowed call. Errors and panics become results the model
// reads; they never end the run. A result larger than MaxToolResult is
// bounded here, once, to a stable head-and-tail form; raw keeps the whole
// text for the transcript, and the model never sees it. images are what the
// tool attached (AttachImage); a failed call shows none.
func (a *Agent) invoke(ctx context.Context, step int, c ToolCall, t Tool, args json.RawMessage) (content, raw string, images []Image) {
	call := c
	a.cfg.Observer(Event{Type: EventToolStarted, Step: step, Call: &call})
	isErr := false
	defer func() {
		if p := recover(); p != nil {
			content, isErr = fmt.Sprintf("error: tool %s crashed: %v", c.Name, p), true
		}
		if len(content) > MaxToolResult {
			raw = content
			note := ""
			if _, ok := a.cfg.Tools.Get(ToolResultTool); ok {
				note = fmt.Sprintf("\n[the full result is %d bytes: read it page by page with %s {\"tool_call_id\": %q}]", len(raw), ToolResultTool, c.ID)
			}
			content = BoundResult(content, MaxToolResult-len(note)) + note
		}
		a.cfg.Observer(Event{Type: EventToolFinished, Step: step, Call: &call, Result: content, IsError: isErr})
	}()
	tctx, att := withAttachments(ContextWithConversation(ContextWithToolCall(ctx, c), toolConversation{a: a, step: step}))
	out, err := t.Execute(tctx, args)
	if err != nil {
		isErr = true
		if out != "" {
			return out + "\nerror: " + err.Error(), "", nil
		}
		return "error: " + err.Error(), "", nil
	}
	return out, "", att.take()
}

// refusals says, per refusal code, who refused, so the model can tell "nobody
// was asked" from "a person said no".
var refusals = map[string]string{
	RefusedByRule:     "was refused by the permission policy",
	RefusedByPerson:   "was declined by the approver",
	RefusedUnattended: "was refused (it needs a human's approval and nobody could be asked)",
	RefusedExpired:    "was refused (approval was requested but nobody answered in time)",
}

func refusalText(tool string, v Verdict) string {
	who, ok := refusals[v.Code]
	if !ok {
		who = "was refused"
	}
	msg := tool + " " + who + "; the call did not run"
	if v.Reason != "" {
		msg += ". " + v.Reason
	}
	return msg
}

// normalizeArgs turns the model's argument text into a JSON object; empty
// arguments mean an empty object.
func normalizeArgs(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("null is not an object")
	}
	return json.RawMessage(s), nil
}
