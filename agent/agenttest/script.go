// Package agenttest provides fakes for tests of code built on package agent:
// scripted HTTP model servers that speak the real SSE wire formats (OpenAI
// chat completions, the Anthropic Messages API and the OpenAI Responses
// API, all scripted with the same turns), and scripted in-memory providers.
// A provider package's own wire tests use ReplayServer, which plays raw
// replies byte for byte, and Collect, which reads a stream and checks the
// chunk order. It also holds the conformance suites of agent's plugin contracts, TestTool
// and TestProviderFor, which every built-in tool, adapted MCP tool and
// registered provider kind runs. Import it only from _test.go files (and
// from benchmarks).
package agenttest

import (
	"time"

	"reasonix/agent"
)

// Turn is one scripted model response: text, then tool calls, then usage.
// The zero fault fields make it an ordinary successful turn; setting one of
// them turns the step into a failure of that kind. The helper constructors
// (Fail, ContextTooLong, Raw, CutToolCall, StreamFail, Garbled, Stalled,
// Delayed, Respond) read
// better in tests than filling the fields by hand.
type Turn struct {
	Text         string
	ToolCalls    []agent.ToolCall
	Usage        agent.Usage
	FinishReason string // defaults to "tool_calls" when ToolCalls is set, else "stop"
	// Thinking is reasoning streamed before Text: ChunkThinking from the
	// scripted provider, reasoning_content on the chat completions wire,
	// a thinking block on the Messages wire, a reasoning item on the
	// Responses wire (its summary when the request asked for one, else its
	// reasoning text).
	Thinking string

	// Status, when non-zero, answers with this HTTP status and a JSON error
	// body {"error":{"message":ErrorMessage,"type":...,"code":ErrorCode}}
	// instead of a stream.
	Status       int
	ErrorMessage string
	ErrorCode    string
	// RetryAfter, with Status, is sent as a Retry-After header in whole
	// seconds (rounded up).
	RetryAfter time.Duration

	// StreamError ends the stream after Text with an in-stream error object
	// carrying ErrorMessage and ErrorCode, and no [DONE].
	StreamError bool
	// Raw, when non-empty, is written verbatim as a 200 text/event-stream
	// body; the other content fields are ignored.
	Raw string
	// Cut drops the connection halfway through the last tool call, after
	// Text and the earlier calls, without a finish reason or [DONE].
	Cut bool
	// Garble ends the stream after Text and the tool calls with an event
	// whose data is not valid JSON, where the answer would complete.
	Garble bool
	// Delay waits this long before the response headers are sent.
	Delay time.Duration
	// Stall keeps the stream open after Text and the tool calls, sending
	// nothing more (no finish reason, no [DONE]) until the client goes away
	// or the server closes: a model that stopped answering mid-stream, for
	// idle watchdogs and cancellation.
	Stall bool

	// Handler, when set, computes the turn to play from the request, e.g.
	// to react to tool results. The Handler of the returned turn is ignored.
	Handler func(Request) Turn
}

// finishReason is the finish reason the turn reports.
func (t Turn) finishReason() string {
	switch {
	case t.FinishReason != "":
		return t.FinishReason
	case len(t.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// Fail is a step that answers with an HTTP error status and message, and a
// Retry-After header when retryAfter > 0.
func Fail(status int, message string, retryAfter time.Duration) Turn {
	return Turn{Status: status, ErrorMessage: message, RetryAfter: retryAfter}
}

// ContextTooLong is a step that fails the way OpenAI reports a conversation
// that no longer fits the model: 400 with code context_length_exceeded.
func ContextTooLong() Turn {
	return Turn{
		Status:       400,
		ErrorCode:    "context_length_exceeded",
		ErrorMessage: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
	}
}

// Raw is a step whose 200 event-stream body is exactly body, e.g. malformed SSE.
func Raw(body string) Turn { return Turn{Raw: body} }

// CutToolCall is a step that streams text, then drops the connection in the
// middle of call.
func CutToolCall(text string, call agent.ToolCall) Turn {
	return Turn{Text: text, ToolCalls: []agent.ToolCall{call}, Cut: true}
}

// StreamFail is a step that streams text and then an in-stream error object.
func StreamFail(text, message string) Turn {
	return Turn{Text: text, StreamError: true, ErrorMessage: message}
}

// Garbled is a step that streams text and then a malformed event.
func Garbled(text string) Turn { return Turn{Text: text, Garble: true} }

// Stalled is a step that streams text and then hangs with the stream open.
func Stalled(text string) Turn { return Turn{Text: text, Stall: true} }

// Delayed returns t with a wait of d before the response headers.
func Delayed(d time.Duration, t Turn) Turn {
	t.Delay = d
	return t
}

// Respond is a step computed from the request by h.
func Respond(h func(Request) Turn) Turn { return Turn{Handler: h} }

// Request is one request a fake received, decoded from its wire format back
// into agent terms (or, for ScriptedProvider, copied from the agent.Request).
type Request struct {
	// Step is the index of the script step that answered, or -1 when none
	// did (script exhausted, or a body that was not JSON).
	Step          int
	Path          string
	Authorization string // the raw Authorization header
	// APIKey is the credential the request carried in its wire's place: the
	// bearer token, or Anthropic's x-api-key header.
	APIKey       string
	Model        string
	Messages     []agent.Message
	Tools        []agent.ToolSchema
	Temperature  *float64
	MaxTokens    int
	Stream       bool
	IncludeUsage bool // stream_options.include_usage; always true on wires that always report usage
	// Effort is the reasoning effort the request named on its wire: Chat
	// Completions' reasoning_effort, the Responses API's reasoning.effort,
	// the Request's Effort for ScriptedProvider; "" when none was sent.
	// ThinkingBudget is Anthropic's thinking.budget_tokens (0 = no thinking).
	Effort         string
	ThinkingBudget int
	// ReasoningSummary is the Responses API's reasoning.summary ("" when
	// the request asked for none).
	ReasoningSummary string
	Body             []byte // the raw JSON body; nil for ScriptedProvider
	// Received is when the request arrived (for the HTTP server: when its
	// headers were read, before the body was).
	Received time.Time
	// Responded is when the response to it was completely written, zero
	// while it is still being answered. Received of the next request minus
	// Responded of this one is the time the client spent between steps.
	Responded time.Time
}
