package anthropic

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
// provider's max_output_bytes, which counts text and tool calls together.
const (
	maxEventSize  = 8 << 20 // one SSE event
	maxToolBlocks = 256     // tool_use blocks in one message
)

// event is one decoded stream event; which fields are set depends on Type.
type event struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage usage `json:"usage"`
	} `json:"message"` // message_start
	ContentBlock *struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		Data  string          `json:"data"` // redacted_thinking
	} `json:"content_block"` // content_block_start
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`         // text_delta
		PartialJSON string `json:"partial_json"` // input_json_delta
		StopReason  string `json:"stop_reason"`  // message_delta
		Thinking    string `json:"thinking"`     // thinking_delta
		Signature   string `json:"signature"`    // signature_delta
	} `json:"delta"`
	Usage *usage    `json:"usage"` // message_delta
	Error *apiError `json:"error"` // error
}

// usage is the API's token count. Input excludes the cached parts, which
// are counted apart: read from the cache, and written to it.
type usage struct {
	Input       int `json:"input_tokens"`
	Output      int `json:"output_tokens"`
	CacheRead   int `json:"cache_read_input_tokens"`
	CacheCreate int `json:"cache_creation_input_tokens"`
}

// toolBlock assembles one tool_use block.
type toolBlock struct {
	index int
	id    string
	name  string
	start json.RawMessage // the input given at block start, used when no delta follows
	input strings.Builder
}

// decoder turns one response body into chunks. It is used once.
type decoder struct {
	p     *Provider
	tools []*toolBlock
	bytes int // text and tool-call bytes so far, bounded by max_output_bytes
	// thinking holds the answer's thinking blocks in stream order, by
	// content-block index; thinkingBytes bounds them (maxThinkingBytes).
	thinking      []*thinkingBlock
	thinkingBytes int
	stop          string
	usage         usage
	started       bool                             // message_start was seen
	gone          bool                             // emit refused a chunk: the consumer left
	readErr       func(error) *agent.ProviderError // classifies body read failures
}

// decode reads body until message_stop and returns the terminal chunk
// (ChunkDone or ChunkError). Text goes to emit as it arrives; tool calls and
// usage just before a successful end. It returns false, with a zero chunk,
// when emit refused a chunk because the consumer is gone.
func (d *decoder) decode(body io.Reader, emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	rd := sse.NewReader(body, maxEventSize)
	for {
		raw, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			msg := "the stream ended before the message was complete"
			if len(d.tools) > 0 {
				msg = "the stream ended in the middle of a tool call"
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
		if ev.Type == "message_stop" {
			return d.complete(emit)
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

// apply folds one event into the decoder state.
func (d *decoder) apply(ev event, emit func(agent.Chunk) bool) *agent.ProviderError {
	switch ev.Type {
	case "message_start":
		if ev.Message == nil {
			return d.p.client.StreamError("message_start without a message")
		}
		d.started = true
		d.usage = ev.Message.Usage
	case "content_block_start":
		if ev.ContentBlock == nil {
			return d.p.client.StreamError("content_block_start without a content block")
		}
		switch ev.ContentBlock.Type {
		case "tool_use":
			return d.startTool(ev)
		case "thinking", "redacted_thinking":
			return d.startThinking(ev)
		}
		// Text arrives in deltas; other block kinds are not part of the
		// answer and are skipped.
	case "content_block_delta":
		if ev.Delta == nil {
			return d.p.client.StreamError("content_block_delta without a delta")
		}
		switch ev.Delta.Type {
		case "text_delta":
			if pe := d.p.client.CountOutput(&d.bytes, len(ev.Delta.Text)); pe != nil {
				return pe
			}
			if ev.Delta.Text != "" && !emit(agent.Chunk{Type: agent.ChunkText, Text: ev.Delta.Text}) {
				d.gone = true
			}
		case "input_json_delta":
			return d.addInput(ev.Index, ev.Delta.PartialJSON)
		case "thinking_delta", "signature_delta":
			if pe := d.addThinking(ev.Index, ev.Delta.Thinking, ev.Delta.Signature); pe != nil {
				return pe
			}
			if ev.Delta.Thinking != "" && !emit(agent.Chunk{Type: agent.ChunkThinking, Text: ev.Delta.Thinking}) {
				d.gone = true
			}
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			d.stop = ev.Delta.StopReason
		}
		if u := ev.Usage; u != nil {
			// Counts here are cumulative. Input counts may be absent (zero):
			// then message_start's stand.
			d.usage.Output = u.Output
			d.usage.Input = cmp.Or(u.Input, d.usage.Input)
			d.usage.CacheRead = cmp.Or(u.CacheRead, d.usage.CacheRead)
			d.usage.CacheCreate = cmp.Or(u.CacheCreate, d.usage.CacheCreate)
		}
	case "error":
		e := apiError{Message: "the server reported an error in the stream"}
		if ev.Error != nil {
			e = *ev.Error
		}
		return &agent.ProviderError{Class: eventClass(e), Message: d.p.client.SafeMessage(e.Message)}
	}
	// ping, content_block_stop and event types added later need nothing.
	return nil
}

func (d *decoder) startTool(ev event) *agent.ProviderError {
	cb := ev.ContentBlock
	if len(d.tools) >= maxToolBlocks {
		return d.p.client.StreamError("too many tool calls in one message")
	}
	if d.find(ev.Index) != nil {
		return d.p.client.StreamError(fmt.Sprintf("content block %d started twice", ev.Index))
	}
	if pe := d.p.client.CountOutput(&d.bytes, len(cb.ID)+len(cb.Name)+len(cb.Input)); pe != nil {
		return pe
	}
	d.tools = append(d.tools, &toolBlock{index: ev.Index, id: cb.ID, name: cb.Name, start: cb.Input})
	return nil
}

func (d *decoder) addInput(index int, frag string) *agent.ProviderError {
	tb := d.find(index)
	if tb == nil {
		return d.p.client.StreamError(fmt.Sprintf("input for content block %d, which is not a tool call", index))
	}
	if pe := d.p.client.CountOutput(&d.bytes, len(frag)); pe != nil {
		return pe
	}
	tb.input.WriteString(frag)
	return nil
}

func (d *decoder) find(index int) *toolBlock {
	for _, tb := range d.tools {
		if tb.index == index {
			return tb
		}
	}
	return nil
}

// complete passes on the tool calls in block order and the usage, and
// returns ChunkDone.
func (d *decoder) complete(emit func(agent.Chunk) bool) (agent.Chunk, bool) {
	if !d.started {
		return d.fail(d.p.client.StreamError("message_stop before message_start"))
	}
	slices.SortFunc(d.tools, func(a, b *toolBlock) int { return a.index - b.index })
	calls := make([]agent.ToolCall, 0, len(d.tools))
	for _, tb := range d.tools {
		if tb.name == "" || tb.id == "" {
			return d.fail(d.p.client.StreamError(fmt.Sprintf("tool call in block %d arrived without an id or name", tb.index)))
		}
		args := tb.input.String()
		if strings.TrimSpace(args) == "" {
			args = strings.TrimSpace(string(tb.start))
		}
		if args == "" || args == "null" {
			args = "{}"
		}
		calls = append(calls, agent.ToolCall{ID: tb.id, Name: tb.name, Arguments: args})
	}
	for i := range calls {
		if !emit(agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &calls[i]}) {
			return agent.Chunk{}, false
		}
	}
	u := d.usage
	total := agent.Usage{Prompt: u.Input + u.CacheRead + u.CacheCreate, Completion: u.Output, Cached: u.CacheRead}
	if !emit(agent.Chunk{Type: agent.ChunkUsage, Usage: total}) {
		return agent.Chunk{}, false
	}
	return agent.Chunk{Type: agent.ChunkDone, FinishReason: finishReason(d.stop, len(calls) > 0),
		ProviderState: d.thinkingState()}, true
}

// thinkingBlock assembles one thinking or redacted_thinking block.
type thinkingBlock struct {
	index     int
	typ       string
	text      strings.Builder
	signature strings.Builder
	data      string
}

func (d *decoder) startThinking(ev event) *agent.ProviderError {
	if len(d.thinking) >= maxToolBlocks {
		return d.p.client.StreamError("too many thinking blocks in one message")
	}
	if d.findThinking(ev.Index) != nil {
		return d.p.client.StreamError(fmt.Sprintf("content block %d started twice", ev.Index))
	}
	if d.thinkingBytes += len(ev.ContentBlock.Data); d.thinkingBytes > maxThinkingBytes {
		return d.p.client.StreamError("the answer's thinking is too large")
	}
	d.thinking = append(d.thinking, &thinkingBlock{index: ev.Index, typ: ev.ContentBlock.Type, data: ev.ContentBlock.Data})
	return nil
}

func (d *decoder) addThinking(index int, text, signature string) *agent.ProviderError {
	tb := d.findThinking(index)
	if tb == nil {
		return d.p.client.StreamError(fmt.Sprintf("thinking for content block %d, which is not a thinking block", index))
	}
	if d.thinkingBytes += len(text) + len(signature); d.thinkingBytes > maxThinkingBytes {
		return d.p.client.StreamError("the answer's thinking is too large")
	}
	tb.text.WriteString(text)
	tb.signature.WriteString(signature)
	return nil
}

func (d *decoder) findThinking(index int) *thinkingBlock {
	for _, tb := range d.thinking {
		if tb.index == index {
			return tb
		}
	}
	return nil
}

// thinkingState packs the answer's thinking blocks for its message.
func (d *decoder) thinkingState() json.RawMessage {
	blocks := make([]block, 0, len(d.thinking))
	for _, tb := range d.thinking {
		if tb.typ == "redacted_thinking" {
			blocks = append(blocks, block{Type: tb.typ, Data: tb.data})
			continue
		}
		text := tb.text.String()
		blocks = append(blocks, block{Type: tb.typ, Thinking: &text, Signature: tb.signature.String()})
	}
	return encodeThinking(blocks)
}

// finishReason maps the API's stop_reason to the agent's vocabulary, which
// follows the chat completions names.
func finishReason(stop string, calls bool) string {
	switch stop {
	case "end_turn", "stop_sequence", "":
		if calls {
			return "tool_calls"
		}
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}
