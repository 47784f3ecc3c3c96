package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Config assembles an Agent. Provider is required; everything else has a
// safe default.
type Config struct {
	Provider     Provider
	Model        string        // overrides the provider's configured model when set
	Tools        *ToolRegistry // nil: the model gets no tools
	Gate         Gate          // nil: ReadOnlyGate (writers fail closed)
	SystemPrompt string
	Temperature  *float64
	MaxTokens    int
	// MaxSteps bounds the model requests of one Run; 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxParallelReads bounds read-only calls of one batch running at once; 0 means 4.
	MaxParallelReads int
	// History restores an earlier conversation (without the system prompt),
	// e.g. one rebuilt from a transcript.
	History  []Message
	Observer Observer // nil: events are dropped
}

// DefaultMaxSteps is the step bound when Config.MaxSteps is zero.
const DefaultMaxSteps = 100

// Agent runs a conversation with one model. It is not safe for concurrent
// Runs: one conversation grows one message at a time.
type Agent struct {
	cfg      Config
	messages []Message

	mu      sync.Mutex
	steered []string // messages from Steer, added before the next request
}

// New checks cfg and returns an Agent ready to Run.
func New(cfg Config) (*Agent, error) {
	if cfg.Provider == nil {
		return nil, errors.New("agent: a provider is required")
	}
	if cfg.MaxSteps < 0 {
		return nil, fmt.Errorf("agent: max steps must be positive, got %d", cfg.MaxSteps)
	}
	cfg.MaxSteps = cmp.Or(cfg.MaxSteps, DefaultMaxSteps)
	cfg.MaxParallelReads = cmp.Or(cfg.MaxParallelReads, 4)
	if cfg.Tools == nil {
		cfg.Tools = NewToolRegistry()
	}
	if cfg.Gate == nil {
		cfg.Gate = ReadOnlyGate
	}
	if cfg.Observer == nil {
		cfg.Observer = func(Event) {}
	}
	return &Agent{cfg: cfg, messages: append([]Message(nil), cfg.History...)}, nil
}

// Messages returns a copy of the conversation so far, without the system prompt.
func (a *Agent) Messages() []Message { return append([]Message(nil), a.messages...) }

// Result summarises a Run.
type Result struct {
	Outcome      Outcome
	FinalAnswer  string
	Steps        int // model requests made
	ToolCalls    int // calls the model requested, refused ones included
	RefusedCalls int
	Usage        Usage
	Duration     time.Duration
	// Err is why a failed, blocked or interrupted run stopped; nil on success.
	Err error
}

// ErrRefused is the cause of a blocked run: a call the task needed was refused.
var ErrRefused = errors.New("agent: a tool call was refused")

// ErrStepLimit is the cause of a run that used all its steps.
var ErrStepLimit = errors.New("agent: step limit reached")

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

// Run adds input as a user message and drives the model until it answers
// without tool calls, the step bound is reached, or ctx ends. Cancelling ctx
// reaches the in-flight model request and running tools. A refused call goes
// back to the model, which may adapt, but the run is then reported blocked:
// a run whose needed call was refused never counts as succeeded.
func (a *Agent) Run(ctx context.Context, input string) Result {
	start := time.Now()
	res := a.run(ctx, input)
	res.Duration = time.Since(start)
	a.cfg.Observer(Event{Type: EventRunFinished, Step: res.Steps, Outcome: res.Outcome, Text: res.FinalAnswer})
	return res
}

func (a *Agent) run(ctx context.Context, input string) Result {
	a.appendMessage(0, Message{Role: RoleUser, Content: input})
	return a.loop(ctx, Result{})
}

// loop requests the model and runs its calls until it answers without calls.
func (a *Agent) loop(ctx context.Context, res Result) Result {
	for {
		if ctx.Err() != nil {
			return a.interrupted(res, ctx)
		}
		a.takeSteered(res.Steps)
		if res.Steps >= a.cfg.MaxSteps {
			res.Outcome, res.Err = OutcomeStepLimit, ErrStepLimit
			return res
		}
		res.Steps++
		reply, usage, err := a.complete(ctx, res.Steps)
		res.Usage = res.Usage.Add(usage)
		if err != nil {
			if ctx.Err() != nil {
				return a.interrupted(res, ctx)
			}
			res.Outcome, res.Err = OutcomeFailed, err
			return res
		}
		a.appendMessage(res.Steps, reply)
		if len(reply.ToolCalls) == 0 {
			res.FinalAnswer = reply.Content
			res.Outcome = OutcomeSucceeded
			if res.RefusedCalls > 0 {
				res.Outcome, res.Err = OutcomeBlocked, ErrRefused
			}
			return res
		}
		res.ToolCalls += len(reply.ToolCalls)
		if stop, ok := a.executeAndCheck(ctx, &res, reply.ToolCalls); !ok {
			return stop
		}
	}
}

// executeAndCheck runs calls and reports whether the loop may go on; when it
// may not, the returned Result says why.
func (a *Agent) executeAndCheck(ctx context.Context, res *Result, calls []ToolCall) (Result, bool) {
	refused, err := a.execute(ctx, res.Steps, calls)
	res.RefusedCalls += refused
	switch {
	case errors.Is(err, ErrSuspend):
		res.Outcome, res.Err = OutcomeSuspended, err
		return *res, false
	case err != nil:
		res.Outcome, res.Err = OutcomeFailed, err
		return *res, false
	}
	return *res, true
}

func (a *Agent) takeSteered(step int) {
	a.mu.Lock()
	msgs := a.steered
	a.steered = nil
	a.mu.Unlock()
	for _, text := range msgs {
		a.appendMessage(step, Message{Role: RoleUser, Content: text})
	}
}

func (a *Agent) interrupted(res Result, ctx context.Context) Result {
	res.Outcome, res.Err = OutcomeInterrupted, context.Cause(ctx)
	return res
}

func (a *Agent) appendMessage(step int, m Message) {
	a.messages = append(a.messages, m)
	a.cfg.Observer(Event{Type: EventMessage, Step: step, Message: &m})
}

// complete makes one model request and gathers the streamed reply.
func (a *Agent) complete(ctx context.Context, step int) (Message, Usage, error) {
	msgs := a.messages
	if a.cfg.SystemPrompt != "" {
		msgs = make([]Message, 0, len(a.messages)+1)
		msgs = append(msgs, Message{Role: RoleSystem, Content: a.cfg.SystemPrompt})
		msgs = append(msgs, a.messages...)
	}
	req := Request{
		Model:       a.cfg.Model,
		Messages:    msgs,
		Tools:       a.cfg.Tools.Schemas(),
		Temperature: a.cfg.Temperature,
		MaxTokens:   a.cfg.MaxTokens,
	}
	sctx := ContextWithRetryReporter(ctx, func(text string) {
		a.cfg.Observer(Event{Type: EventRetry, Step: step, Text: text})
	})
	stream, err := a.cfg.Provider.Stream(sctx, req)
	if err != nil {
		return Message{}, Usage{}, err
	}
	var (
		text  strings.Builder
		calls []ToolCall
		usage Usage
	)
	for chunk := range stream {
		switch chunk.Type {
		case ChunkText:
			text.WriteString(chunk.Text)
			a.cfg.Observer(Event{Type: EventTextDelta, Step: step, Text: chunk.Text})
		case ChunkToolCall:
			calls = append(calls, *chunk.ToolCall)
		case ChunkUsage:
			usage = usage.Add(chunk.Usage)
			u := chunk.Usage
			a.cfg.Observer(Event{Type: EventUsage, Step: step, Usage: &u})
		case ChunkError:
			// Drain so the provider's goroutine can finish.
			for range stream {
			}
			return Message{}, usage, chunk.Err
		case ChunkDone:
		}
	}
	if ctx.Err() != nil {
		return Message{}, usage, context.Cause(ctx)
	}
	return Message{Role: RoleAssistant, Content: text.String(), ToolCalls: calls}, usage, nil
}

// outcome of one tool call, kept in call order.
type callResult struct {
	content string
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
	refused := 0
	for i, c := range calls[:done] {
		if results[i].refused {
			refused++
		}
		a.appendMessage(step, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: results[i].content})
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
			results[i].content = a.invoke(ctx, step, calls[i], t, args[i])
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].content = a.invoke(ctx, step, calls[i], t, args[i])
		}()
	}
	wg.Wait()
	return nil
}

// invoke runs one allowed call. Errors and panics become results the model
// reads; they never end the run.
func (a *Agent) invoke(ctx context.Context, step int, c ToolCall, t Tool, args json.RawMessage) (content string) {
	call := c
	a.cfg.Observer(Event{Type: EventToolStarted, Step: step, Call: &call})
	isErr := false
	defer func() {
		if p := recover(); p != nil {
			content, isErr = fmt.Sprintf("error: tool %s crashed: %v", c.Name, p), true
			_ = debug.Stack // the stack is for the log, which the observer owns
		}
		content = BoundResult(content, MaxToolResult)
		a.cfg.Observer(Event{Type: EventToolFinished, Step: step, Call: &call, Result: content, IsError: isErr})
	}()
	out, err := t.Execute(ContextWithToolCall(ctx, c), args)
	if err != nil {
		isErr = true
		if out != "" {
			return out + "\nerror: " + err.Error()
		}
		return "error: " + err.Error()
	}
	return out
}

func refusalText(tool string, v Verdict) string {
	who := map[string]string{
		RefusedByRule:      "refused by the permission policy",
		RefusedByPerson:    "declined by the approver",
		RefusedUnattended:  "refused: it needs a human's approval and nobody could be asked",
		RefusedExpired:     "refused: approval was requested but nobody answered in time",
		RefusedOutsideRoot: "refused: the path is outside the permitted directories",
	}[v.Code]
	if who == "" {
		who = "refused"
	}
	msg := fmt.Sprintf("%s was %s; the call did not run", tool, strings.TrimPrefix(who, "refused: "))
	if strings.HasPrefix(who, "refused: ") {
		msg = fmt.Sprintf("%s was refused (%s); the call did not run", tool, strings.TrimPrefix(who, "refused: "))
	}
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
