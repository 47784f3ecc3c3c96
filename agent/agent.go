package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Effort is the reasoning effort of every request ("" = the model's
	// default); usage events carry it.
	Effort string
	// MaxSteps bounds the model requests of one Run; 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxParallelReads bounds read-only calls of one batch running at once; 0 means 4.
	MaxParallelReads int
	// History restores an earlier conversation (without the system prompt),
	// e.g. one rebuilt from a transcript.
	History  []Message
	Observer Observer // nil: events are dropped
	// ContextWindow is the model's window in tokens; 0 never compacts.
	// CompactRatio (0 = DefaultCompactRatio) places the only automatic
	// compaction trigger at ContextWindow × CompactRatio (see compact.go).
	ContextWindow int
	CompactRatio  float64
	// Recall, when set, returns what is remembered that bears on a user
	// message ("" for nothing); the harness appends it to that message.
	// It goes in the conversation, never in the system prompt or the
	// tools, so the request prefix stays byte-stable and prompt caches
	// keep hitting. It must be quick: it runs before each user turn.
	Recall func(ctx context.Context, text string) string
	// Thinking, when set, receives the model's reasoning as it streams,
	// where the provider shows it (ChunkThinking). It is not an event:
	// reasoning is never persisted or sent on, only shown live (an
	// editor's thought chunks). It must be quick, like an Observer.
	Thinking func(text string)
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

	window contextState // what the model sees of messages (compact.go)
	storm  storm        // equivalent failing batches in a row (storm.go)

	// Folds asked for (conversation.go): /compact steered in applies
	// before the next request; compress folds while its call runs, one at
	// a time, and its summary's cost joins the step's usage.
	compactAsked bool
	compactFocus string
	foldMu       sync.Mutex
	foldSpent    Usage

	holdsImages bool // some message has Images (image.go)
	// finish is the last model reply's finish reason (Result.FinishReason).
	finish string
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
	if err := checkCompaction(&cfg); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, messages: append([]Message(nil), cfg.History...)}
	a.window.restore(a.messages)
	return a, nil
}

// Messages returns a copy of the conversation so far, without the system
// prompt: the canonical, append-only record, with a RoleCheckpoint message
// where the context was compacted (a later Config.History restores it).
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
	// FinishReason is the provider's finish reason for the final answer
	// ("stop", "length" when it hit the output limit, "content_filter"
	// when the model refused); "" when the run ended another way.
	FinishReason string
}

// ErrRefused is the cause of a blocked run: a call the task needed was refused.
var ErrRefused = errors.New("agent: a tool call was refused")

// ErrStepLimit is the cause of a run that used all its steps.
var ErrStepLimit = errors.New("agent: step limit reached")

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
	if focus, ok := ParseCompactCommand(input); ok {
		// A built-in action: it changes the conversation's view and never
		// reaches the model as a turn.
		c, spent, err := a.compactNow(ctx, 0, FoldCommand, focus)
		if err != nil {
			return a.interrupted(Result{Usage: spent}, ctx)
		}
		return Result{Outcome: OutcomeSucceeded, FinalAnswer: c.describe(), Usage: spent}
	}
	a.appendMessage(0, Message{Role: RoleUser, Content: a.recall(ctx, input)})
	return a.loop(ctx, Result{})
}

// loop requests the model and runs its calls until it answers without calls.
func (a *Agent) loop(ctx context.Context, res Result) Result {
	for {
		if ctx.Err() != nil {
			return a.interrupted(res, ctx)
		}
		a.takeSteered(ctx, res.Steps)
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
			res.FinalAnswer, res.FinishReason = reply.Content, a.finish
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
	res.Usage, a.foldSpent = res.Usage.Add(a.foldSpent), Usage{}
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
	msgs, spent, err := a.prompt(ctx, step)
	if err != nil {
		return Message{}, spent, err
	}
	req := Request{
		Model:       a.cfg.Model,
		Messages:    msgs,
		Tools:       a.cfg.Tools.Schemas(),
		Temperature: a.cfg.Temperature,
		MaxTokens:   a.cfg.MaxTokens,
		Effort:      a.cfg.Effort,
	}
	sctx := ContextWithRetryReporter(ctx, func(text string) {
		a.cfg.Observer(Event{Type: EventRetry, Step: step, Text: text})
	})
	stream, err := a.cfg.Provider.Stream(sctx, req)
	if err != nil {
		return Message{}, spent, err
	}
	var (
		text  strings.Builder
		calls []ToolCall
		usage = spent // a compaction's summary call is part of this step
		state json.RawMessage
	)
	for chunk := range stream {
		switch chunk.Type {
		case ChunkText:
			text.WriteString(chunk.Text)
			a.cfg.Observer(Event{Type: EventTextDelta, Step: step, Text: chunk.Text})
		case ChunkThinking:
			if a.cfg.Thinking != nil && chunk.Text != "" {
				a.cfg.Thinking(chunk.Text)
			}
		case ChunkToolCall:
			calls = append(calls, *chunk.ToolCall)
		case ChunkUsage:
			usage = usage.Add(chunk.Usage)
			u := chunk.Usage
			a.cfg.Observer(Event{Type: EventUsage, Step: step, Usage: &u, Model: ModelRef(a.cfg), Effort: a.cfg.Effort})
		case ChunkError:
			// Drain so the provider's goroutine can finish.
			for range stream {
			}
			return Message{}, usage, chunk.Err
		case ChunkDone:
			state, a.finish = chunk.ProviderState, chunk.FinishReason
		}
	}
	if ctx.Err() != nil {
		return Message{}, usage, context.Cause(ctx)
	}
	a.window.reported(usage, spent)
	return Message{Role: RoleAssistant, Content: text.String(), ToolCalls: calls, ProviderState: state}, usage, nil
}
