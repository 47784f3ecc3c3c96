package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"reasonix/agent"
	"reasonix/internal/sse"
)

// Limits on what one response may make the decoder hold, besides the
// provider's output bounds (counted here, and by the transport).
const (
	maxEventSize = 8 << 20 // one SSE event
	maxToolCalls = 256     // distinct tool-call indexes
)

// streamChunk is one decoded event of a chat completions stream.
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content string `json:"content"`
			// Reasoning is DeepSeek's (and vLLM's) reasoning_content: the
			// model's thinking before the answer, shown but never sent back.
			Reasoning string          `json:"reasoning_content"`
			ToolCalls []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		Details          *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
	} `json:"usage"`
	Error *apiError `json:"error"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// partialCall accumulates the deltas of one tool call.
type partialCall struct {
	index int
	id    strings.Builder
	name  strings.Builder
	args  strings.Builder
}

// decoder turns one response body into chunks. It is used once.
type decoder struct {
	p       *Provider
	calls   []*partialCall // in order of first appearance
	bytes   int            // text and tool-call bytes so far, bounded by max_output_bytes
	said    bool           // some text other than white space arrived
	finish  string
	usage   *agent.Usage
	gone    bool                             // emit refused a chunk: the consumer left
	readErr func(error) *agent.ProviderError // classifies body read failures
}

// decode reads body to its end and returns the terminal chunk (ChunkDone or
// ChunkError). Text is passed to emit as it arrives; tool calls and usage
// are passed just before a successful end. When emit returns false the
// consumer is gone and decode returns at once with a zero Chunk.
func (d *decoder) decode(body io.Reader, emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	rd := sse.NewReader(body, maxEventSize)
	for {
		ev, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			if d.finish != "" {
				// Some servers end with the finish reason and no [DONE].
				return d.complete(emit)
			}
			msg := "the stream ended before the response was complete"
			if len(d.calls) > 0 {
				msg = "the stream ended in the middle of a tool call"
			}
			return d.fail(d.p.client.StreamError(msg))
		case errors.Is(err, sse.ErrEventTooLarge):
			return d.fail(d.p.client.StreamError(fmt.Sprintf("a stream event is larger than %d bytes", maxEventSize)))
		case err != nil:
			return d.fail(d.readErr(err))
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			return d.complete(emit)
		}
		var c streamChunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return d.fail(d.p.client.StreamError("malformed stream event: " + err.Error()))
		}
		if c.Error != nil {
			return d.fail(d.p.inStreamError(*c.Error))
		}
		if pe := d.apply(c, emit); pe != nil {
			return d.fail(pe)
		}
		if d.gone {
			return agent.Chunk{}, false
		}
	}
}

func (d *decoder) fail(pe *agent.ProviderError) (agent.Chunk, bool) {
	return agent.Chunk{Type: agent.ChunkError, Err: pe}, true
}

// apply folds one event into the decoder state.
func (d *decoder) apply(c streamChunk, emit func(agent.Chunk) bool) *agent.ProviderError {
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one completion is requested; ignore stray ones
		}
		if text := ch.Delta.Reasoning; text != "" {
			if pe := d.p.client.CountOutput(&d.bytes, len(text)); pe != nil {
				return pe
			}
			if !emit(agent.Chunk{Type: agent.ChunkThinking, Text: text}) {
				d.gone = true
				return nil
			}
		}
		if text := ch.Delta.Content; text != "" {
			if pe := d.p.client.CountOutput(&d.bytes, len(text)); pe != nil {
				return pe
			}
			d.said = d.said || strings.TrimSpace(text) != ""
			if !emit(agent.Chunk{Type: agent.ChunkText, Text: text}) {
				d.gone = true
				return nil
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			if pe := d.addCall(tc); pe != nil {
				return pe
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.finish = *ch.FinishReason
		}
	}
	if u := c.Usage; u != nil {
		usage := agent.Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Cached: u.CacheHitTokens}
		if u.Details != nil {
			usage.Cached = max(usage.Cached, u.Details.CachedTokens)
		}
		d.usage = &usage // the last report wins: some servers send running totals
	}
	return nil
}

// addCall merges one tool-call delta. Deltas are matched by index; a delta
// without one continues the latest call unless it brings a new id.
func (d *decoder) addCall(tc toolCallDelta) *agent.ProviderError {
	var pc *partialCall
	switch {
	case tc.Index != nil:
		if *tc.Index < 0 || *tc.Index >= maxToolCalls {
			return d.p.client.StreamError(fmt.Sprintf("tool call index %d is out of range", *tc.Index))
		}
		for _, c := range d.calls {
			if c.index == *tc.Index {
				pc = c
				break
			}
		}
	case len(d.calls) > 0 && (tc.ID == "" || tc.ID == d.calls[len(d.calls)-1].id.String()):
		pc = d.calls[len(d.calls)-1]
	}
	if pc == nil {
		idx := len(d.calls)
		if tc.Index != nil {
			idx = *tc.Index
		} else if len(d.calls) > 0 {
			idx = d.calls[len(d.calls)-1].index + 1
		}
		if len(d.calls) >= maxToolCalls {
			return d.p.client.StreamError("too many tool calls in one response")
		}
		pc = &partialCall{index: idx}
		d.calls = append(d.calls, pc)
	}
	if pe := d.p.client.CountOutput(&d.bytes, len(tc.ID)+len(tc.Function.Name)+len(tc.Function.Arguments)); pe != nil {
		return pe
	}
	mergeFragment(&pc.id, tc.ID)
	mergeFragment(&pc.name, tc.Function.Name)
	pc.args.WriteString(tc.Function.Arguments)
	return nil
}

// mergeFragment adds a piece of an id or name. OpenAI sends each only once,
// but some servers resend the whole value with every delta, so a fragment
// that repeats or extends what is there replaces it instead of appending.
func mergeFragment(b *strings.Builder, frag string) {
	switch cur := b.String(); {
	case frag == "":
	case cur != "" && strings.HasPrefix(frag, cur):
		b.Reset()
		b.WriteString(frag)
	default:
		b.WriteString(frag)
	}
}

// complete emits the accumulated tool calls in index order and the usage,
// and returns ChunkDone.
func (d *decoder) complete(emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	if !d.said && len(d.calls) == 0 {
		// Nothing to show and nothing to do: passing this on as a finished
		// answer would end the run "succeeded" with no work and no word.
		msg := "the model's answer has no text and no tool call"
		if d.finish != "" {
			msg += " (finish reason " + strconv.Quote(d.finish) + ")"
		}
		return d.fail(&agent.ProviderError{Class: agent.ErrEmptyAnswer, Message: d.p.client.SafeMessage(msg)})
	}
	slices.SortFunc(d.calls, func(a, b *partialCall) int { return a.index - b.index })
	calls := make([]agent.ToolCall, 0, len(d.calls))
	for n, pc := range d.calls {
		call := agent.ToolCall{ID: pc.id.String(), Name: pc.name.String(), Arguments: pc.args.String()}
		if call.Name == "" {
			return d.fail(d.p.client.StreamError(fmt.Sprintf("tool call %d arrived without a name", pc.index)))
		}
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", n) // some local servers send none
		}
		if strings.TrimSpace(call.Arguments) == "" {
			call.Arguments = "{}"
		}
		calls = append(calls, call)
	}
	for i := range calls {
		if !emit(agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &calls[i]}) {
			return agent.Chunk{}, false
		}
	}
	if d.usage != nil && !emit(agent.Chunk{Type: agent.ChunkUsage, Usage: *d.usage}) {
		return agent.Chunk{}, false
	}
	finish := d.finish
	if finish == "" {
		finish = "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	}
	return agent.Chunk{Type: agent.ChunkDone, FinishReason: finish}, true
}

// inStreamError classifies an error object sent inside a 200 stream.
func (p *Provider) inStreamError(e apiError) *agent.ProviderError {
	class := agent.ErrStream
	switch {
	case isContextTooLong(e):
		class = agent.ErrContextTooLong
	case e.code() == "rate_limit_exceeded":
		class = agent.ErrRateLimited
	}
	msg := e.Message
	if msg == "" {
		msg = "the server reported an error in the stream"
	}
	return &agent.ProviderError{Class: class, Message: p.client.SafeMessage(msg)}
}
