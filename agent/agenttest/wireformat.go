package agenttest

import (
	"maps"
	"net/http"
	"slices"
	"time"
)

// wireFormat is what makes a Server speak one provider kind's API. Each is
// written from the vendor's documented format, independently of the client
// package it fakes, so the fake checks the client instead of mirroring it.
type wireFormat interface {
	kind() string
	// basePath is appended to the server's origin to form Server.URL.
	basePath() string
	// path is the suffix of the request path the endpoint answers.
	path() string
	// apiKey returns the credential of a request, as the wire carries it.
	apiKey(http.Header) string
	// refuse returns why the API would refuse a request with these headers
	// ("" when it would not): a header the wire requires is missing.
	refuse(http.Header) string
	// decode fills the decoded fields of rec from a request body.
	decode(body []byte, rec *Request) error
	// writeError answers with an HTTP error in the wire's JSON envelope.
	writeError(w http.ResponseWriter, status int, retryAfter time.Duration, message, code string)
	// plan renders a turn as the events of its stream, split the way real
	// servers split them (or more finely). A StreamError turn ends with the
	// wire's in-stream error; a Cut turn stops in the middle of its last
	// tool call and a Stall turn after its tool calls, both before anything
	// that completes the answer.
	plan(turn Turn, rec Request) []sseEvent
}

// sseEvent is one server-sent event: an optional event name and its data.
type sseEvent struct {
	name string
	data []byte
}

// wires are the fakes by provider kind.
var wires = map[string]wireFormat{
	"openai":    openaiWire{},
	"anthropic": anthropicWire{},
	"responses": responsesWire{},
}

// Kinds lists the provider kinds a Server can speak, sorted.
func Kinds() []string { return slices.Sorted(maps.Keys(wires)) }
