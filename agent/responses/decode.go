package responses

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"reasonix/agent"
	"reasonix/internal/sse"
)

// Limits on what one response may make the decoder hold, besides the
// provider's max_output_bytes, which counts text and function calls
// together. Reasoning is no part of the answer but travels back with it.
const (
	maxEventSize      = 8 << 20  // one SSE event
	maxReasoningBytes = 32 << 20 // all reasoning items together
	maxOutputItem     = 256      // function calls plus reasoning items in one response
)

// event is one decoded stream event; which fields are set depends on Type.
type event struct {
	Type        string `json:"type"`
	OutputIndex int    `json:"output_index"`
	ItemID      string `json:"item_id"`
	Delta       string `json:"delta"` // *.delta
	// SummaryIndex is the part of a reasoning summary a
	// response.reasoning_summary_part.added opens.
	SummaryIndex int             `json:"summary_index"`
	Arguments    *string         `json:"arguments"` // response.function_call_arguments.done
	Item         json.RawMessage `json:"item"`      // response.output_item.added / .done
	Response     *struct {
		Status            string    `json:"status"`
		Usage             *usage    `json:"usage"`
		Error             *apiError `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
	} `json:"response"` // response.completed / .incomplete / .failed
	// An "error" event carries the error's fields at the top level, or
	// (from some gateways) nested as in an error body.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *apiError       `json:"error"`
}

// item is the part of an output item the decoder reads.
type item struct {
	Type      string `json:"type"` // "message", "function_call", "reasoning", ...
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usage struct {
	Input        int `json:"input_tokens"` // includes the cached part
	Output       int `json:"output_tokens"`
	InputDetails *struct {
		Cached int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// call assembles one function call.
type call struct {
	index  int // output_index
	itemID string
	callID string
	name   string
	args   strings.Builder
}

// decoder turns one response body into chunks. It is used once.
type decoder struct {
	p         *Provider
	calls     []*call
	reasoning []json.RawMessage
	bytes     int                              // text and function-call bytes so far, bounded by max_output_bytes
	reasoned  int                              // bytes of reasoning items kept and reasoning text streamed
	thought   bool                             // reasoning text was streamed: a new summary part starts a paragraph
	gone      bool                             // emit refused a chunk: the consumer left
	readErr   func(error) *agent.ProviderError // classifies body read failures
}

// decode reads body until the response completes and returns the terminal
// chunk (ChunkDone or ChunkError). Text goes to emit as it arrives; function
// calls and usage just before a successful end. It returns false, with a
// zero chunk, when emit refused a chunk because the consumer is gone.
func (d *decoder) decode(body io.Reader, emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	rd := sse.NewReader(body, maxEventSize)
	for {
		raw, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			msg := "the stream ended before the response was complete"
			if len(d.calls) > 0 {
				msg = "the stream ended in the middle of a function call"
			}
			return d.fail(d.p.client.StreamError(msg))
		case errors.Is(err, sse.ErrEventTooLarge):
			return d.fail(d.p.client.StreamError(fmt.Sprintf("a stream event is larger than %d bytes", maxEventSize)))
		case err != nil:
			return d.fail(d.readErr(err))
		}
		var ev event
		if err := json.Unmarshal([]byte(raw.Data), &ev); err != nil {
			return d.fail(d.p.client.StreamError("malformed stream event: " + err.Error()))
		}
		switch ev.Type {
		case "response.completed", "response.incomplete":
			return d.complete(ev, emit)
		case "response.failed":
			e := apiError{Message: "the response failed"}
			if ev.Response != nil && ev.Response.Error != nil {
				e = *ev.Response.Error
			}
			return d.fail(d.p.eventError(e))
		case "error":
			e := apiError{Message: ev.Message}
			json.Unmarshal(ev.Code, &e.Code)
			if ev.Error != nil {
				e = *ev.Error
			}
			if e.Message == "" {
				e.Message = "the server reported an error in the stream"
			}
			return d.fail(d.p.eventError(e))
		}
		if pe := d.apply(ev, emit); pe != nil {
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

func (p *Provider) eventError(e apiError) *agent.ProviderError {
	msg := e.Message
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	return &agent.ProviderError{Class: eventClass(e), Message: p.client.SafeMessage(msg)}
}

// apply folds one event into the decoder state. Events it does not know
// (created, in_progress, content parts, later additions) pass.
func (d *decoder) apply(ev event, emit func(agent.Chunk) bool) *agent.ProviderError {
	switch ev.Type {
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		// The reasoning's summary (OpenAI's models, when the request asks
		// for one) or its full text (open models behind a Responses
		// endpoint) streams as thinking: shown live, no part of the answer,
		// so it counts toward the reasoning's bound, not max_output_bytes.
		return d.think(ev.Delta, emit)
	case "response.reasoning_summary_part.added":
		if ev.SummaryIndex > 0 && d.thought {
			return d.think("\n\n", emit) // the summary's parts are paragraphs
		}
	case "response.output_text.delta", "response.refusal.delta":
		// A refusal is the model's answer too; the person should read it.
		if pe := d.p.client.CountOutput(&d.bytes, len(ev.Delta)); pe != nil {
			return pe
		}
		if ev.Delta != "" && !emit(agent.Chunk{Type: agent.ChunkText, Text: ev.Delta}) {
			d.gone = true
		}
	case "response.output_item.added", "response.output_item.done":
		return d.item(ev)
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		c := d.find(ev.OutputIndex, ev.ItemID)
		if c == nil {
			return d.p.client.StreamError(fmt.Sprintf("arguments for output item %d, which is not a function call", ev.OutputIndex))
		}
		if ev.Arguments != nil { // .done repeats the whole value: it wins
			return d.setArgs(c, *ev.Arguments)
		}
		if pe := d.p.client.CountOutput(&d.bytes, len(ev.Delta)); pe != nil {
			return pe
		}
		c.args.WriteString(ev.Delta)
	}
	return nil
}

// think passes a piece of reasoning text on as ChunkThinking.
func (d *decoder) think(text string, emit func(agent.Chunk) bool) *agent.ProviderError {
	if text == "" {
		return nil
	}
	if d.reasoned += len(text); d.reasoned > maxReasoningBytes {
		return d.p.client.StreamError(fmt.Sprintf("reasoning exceeds %d bytes", maxReasoningBytes))
	}
	d.thought = true
	if !emit(agent.Chunk{Type: agent.ChunkThinking, Text: text}) {
		d.gone = true
	}
	return nil
}

// item handles an output item being announced or finished.
func (d *decoder) item(ev event) *agent.ProviderError {
	var it item
	if err := json.Unmarshal(ev.Item, &it); err != nil {
		return d.p.client.StreamError("malformed output item: " + err.Error())
	}
	done := ev.Type == "response.output_item.done"
	switch it.Type {
	case "function_call":
		c := d.find(ev.OutputIndex, it.ID)
		if c == nil {
			if len(d.calls)+len(d.reasoning) >= maxOutputItem {
				return d.p.client.StreamError("too many output items in one response")
			}
			c = &call{index: ev.OutputIndex, itemID: it.ID}
			d.calls = append(d.calls, c)
		}
		// The finished item repeats what was announced and streamed; only
		// what it adds counts toward the answer's size.
		grown := max(len(it.CallID)-len(c.callID), 0) + max(len(it.Name)-len(c.name), 0)
		if pe := d.p.client.CountOutput(&d.bytes, grown); pe != nil {
			return pe
		}
		c.callID, c.name = cmp.Or(it.CallID, c.callID), cmp.Or(it.Name, c.name)
		if it.Arguments != "" && (done || c.args.Len() == 0) {
			return d.setArgs(c, it.Arguments)
		}
	case "reasoning":
		if !done {
			return nil // the finished item is the one to keep
		}
		if len(d.calls)+len(d.reasoning) >= maxOutputItem {
			return d.p.client.StreamError("too many output items in one response")
		}
		if d.reasoned += len(ev.Item); d.reasoned > maxReasoningBytes {
			return d.p.client.StreamError(fmt.Sprintf("reasoning exceeds %d bytes", maxReasoningBytes))
		}
		d.reasoning = append(d.reasoning, slices.Clone(ev.Item))
	}
	return nil
}

// setArgs replaces the arguments of c with a whole value the server
// repeated, counting only what it adds to those streamed before.
func (d *decoder) setArgs(c *call, args string) *agent.ProviderError {
	if pe := d.p.client.CountOutput(&d.bytes, max(len(args)-c.args.Len(), 0)); pe != nil {
		return pe
	}
	c.args.Reset()
	c.args.WriteString(args)
	return nil
}

// find returns the call with itemID when both sides know their item id,
// else the call at output index.
func (d *decoder) find(index int, itemID string) *call {
	for _, c := range d.calls {
		if itemID != "" && c.itemID != "" {
			if c.itemID == itemID {
				return c
			}
			continue
		}
		if c.index == index {
			return c
		}
	}
	return nil
}

// complete passes on the function calls in output order and the usage, and
// returns ChunkDone carrying the reasoning to keep.
func (d *decoder) complete(ev event, emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	slices.SortFunc(d.calls, func(a, b *call) int { return a.index - b.index })
	calls := make([]agent.ToolCall, 0, len(d.calls))
	for _, c := range d.calls {
		if c.name == "" || c.callID == "" {
			return d.fail(d.p.client.StreamError(fmt.Sprintf("function call %d arrived without a call id or name", c.index)))
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		calls = append(calls, agent.ToolCall{ID: c.callID, Name: c.name, Arguments: args})
	}
	for i := range calls {
		if !emit(agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &calls[i]}) {
			return agent.Chunk{}, false
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	if r := ev.Response; r != nil {
		if u := r.Usage; u != nil {
			total := agent.Usage{Prompt: u.Input, Completion: u.Output}
			if u.InputDetails != nil {
				total.Cached = u.InputDetails.Cached
			}
			if !emit(agent.Chunk{Type: agent.ChunkUsage, Usage: total}) {
				return agent.Chunk{}, false
			}
		}
		if ev.Type == "response.incomplete" {
			finish = "length"
			if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
				finish = "content_filter"
			}
		}
	}
	return agent.Chunk{Type: agent.ChunkDone, FinishReason: finish, ProviderState: encodeState(d.reasoning)}, true
}
