package agenttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"reasonix/agent"
)

// ScriptedProvider is an in-memory agent.Provider that plays Turns without
// HTTP, for fast tests of code that drives a provider. It records every
// request. It is safe for concurrent use.
type ScriptedProvider struct {
	mu       sync.Mutex
	script   []Turn
	next     int
	requests []Request
}

var _ agent.Provider = (*ScriptedProvider)(nil)

// NewScriptedProvider returns a provider that answers successive Stream
// calls with turns, in order.
func NewScriptedProvider(turns ...Turn) *ScriptedProvider {
	return &ScriptedProvider{script: append([]Turn(nil), turns...)}
}

// Name returns "scripted".
func (p *ScriptedProvider) Name() string { return "scripted" }

// Add appends turns to the script.
func (p *ScriptedProvider) Add(turns ...Turn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.script = append(p.script, turns...)
}

// Requests returns a copy of the requests received so far, in order.
func (p *ScriptedProvider) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Remaining reports how many turns have not been played yet.
func (p *ScriptedProvider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script) - p.next
}

// Stream plays the next turn: text in a few ChunkText pieces, then each tool
// call, then usage (when non-zero), then ChunkDone. Fault fields become a
// ChunkError carrying an *agent.ProviderError of the matching class. Stream
// itself fails only when the script is exhausted.
func (p *ScriptedProvider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	rec := Request{Step: -1, Model: req.Model, Messages: append([]agent.Message(nil), req.Messages...),
		Tools: append([]agent.ToolSchema(nil), req.Tools...), Temperature: req.Temperature, Effort: req.Effort,
		MaxTokens: req.MaxTokens, Stream: true, IncludeUsage: true, Received: time.Now()}
	p.mu.Lock()
	ok := p.next < len(p.script)
	var turn Turn
	if ok {
		turn, rec.Step = p.script[p.next], p.next
		p.next++
	}
	p.requests = append(p.requests, rec)
	idx, steps := len(p.requests)-1, len(p.script)
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("agenttest: script exhausted: all %d steps were already played", steps)
	}
	if turn.Handler != nil {
		turn = turn.Handler(rec)
	}

	out := make(chan agent.Chunk)
	go func() {
		defer close(out)
		defer p.responded(idx)
		send := func(c agent.Chunk) bool {
			select {
			case out <- c:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if turn.Delay > 0 {
			t := time.NewTimer(turn.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
		for _, c := range scriptedChunks(turn) {
			if !send(c) {
				return
			}
		}
		if turn.Stall {
			<-ctx.Done() // a stalled model answers nothing more
		}
	}()
	return out, nil
}

func (p *ScriptedProvider) responded(idx int) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests[idx].Responded = now
}

// scriptedChunks is the chunk sequence a turn plays as.
func scriptedChunks(t Turn) []agent.Chunk {
	fail := func(class error, status int, msg string) []agent.Chunk {
		return []agent.Chunk{{Type: agent.ChunkError, Err: &agent.ProviderError{
			Class: class, Status: status, RetryAfter: t.RetryAfter, Message: msg}}}
	}
	switch {
	case t.Status != 0:
		return fail(statusClass(t.Status, t.ErrorCode), t.Status, t.ErrorMessage)
	case t.Raw != "":
		return fail(agent.ErrStream, 0, "scripted malformed stream")
	}
	var out []agent.Chunk
	for _, piece := range splitN(t.Thinking, 2) {
		out = append(out, agent.Chunk{Type: agent.ChunkThinking, Text: piece})
	}
	for _, piece := range splitN(t.Text, 3) {
		out = append(out, agent.Chunk{Type: agent.ChunkText, Text: piece})
	}
	switch {
	case t.StreamError:
		return append(out, fail(agent.ErrStream, 0, t.ErrorMessage)...)
	case t.Cut:
		return append(out, fail(agent.ErrStream, 0, "stream ended in the middle of a tool call")...)
	case t.Garble:
		return append(out, fail(agent.ErrStream, 0, "scripted malformed stream event")...)
	}
	for _, c := range t.ToolCalls {
		out = append(out, agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &c})
	}
	if t.Stall {
		return out
	}
	if t.Usage != (agent.Usage{}) {
		out = append(out, agent.Chunk{Type: agent.ChunkUsage, Usage: t.Usage})
	}
	return append(out, agent.Chunk{Type: agent.ChunkDone, FinishReason: t.finishReason()})
}

// statusClass classifies an HTTP status the way a real provider would.
func statusClass(status int, code string) error {
	switch {
	case code == "context_length_exceeded":
		return agent.ErrContextTooLong
	case status == 429:
		return agent.ErrRateLimited
	case status == 408, status == 409, status >= 500:
		return agent.ErrTransient
	default:
		return agent.ErrRejected
	}
}
