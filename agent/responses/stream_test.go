package responses

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
)

func TestStreamsText(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "text.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("question"))
	if got.text != "The answer is forty-two." || got.pieces != 2 {
		t.Fatalf("text = %q in %d pieces", got.text, got.pieces)
	}
	if got.final.Type != agent.ChunkDone || got.final.FinishReason != "stop" || got.final.ProviderState != nil {
		t.Fatalf("final = %+v", got.final)
	}
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 25, Completion: 12}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
	if h := api.headers[0]; h.Get("Authorization") != "Bearer "+testKey || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers = %v", h)
	}
}

func TestRequestGoesToResponsesEndpoint(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL + "/v1/", Model: "m", MaxRetries: -1})
	mustStream(t, p, userRequest("x"))
	if path != "/v1/responses" {
		t.Fatalf("path = %q", path)
	}
}

func TestParallelFunctionCallsReasoningAndCachedUsage(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "tools_reasoning.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("look"))
	want := []agent.ToolCall{
		{ID: "call_Aa1", Name: "read_file", Arguments: `{"path":"main.go"}`},
		{ID: "call_Bb2", Name: "grep", Arguments: `{"pattern":"func Test","path":"."}`},
	}
	if !slices.Equal(got.calls, want) || got.final.FinishReason != "tool_calls" {
		t.Fatalf("calls %+v, final %+v", got.calls, got.final)
	}
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 4056, Completion: 89, Cached: 3584}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
	items := reasoningItems(got.final.ProviderState)
	if len(items) != 1 || !strings.Contains(string(items[0]), `"encrypted_content":"gAAAAABoXq3fENCRYPTEDREASONINGxyz=="`) {
		t.Fatalf("state = %s", got.final.ProviderState)
	}
}

// The reasoning of one turn goes back, unchanged and before the calls it
// led to, on the next request.
func TestReasoningIsSentBackOnTheNextTurn(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "tools_reasoning.sse"), recorded(t, "text.sse"))
	p, _ := newTestProvider(t, api.config())
	first := mustStream(t, p, userRequest("look"))
	next := agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "look"},
		{Role: agent.RoleAssistant, ToolCalls: first.calls, ProviderState: first.final.ProviderState},
		{Role: agent.RoleTool, ToolCallID: "call_Aa1", Content: "package main"},
		{Role: agent.RoleTool, ToolCallID: "call_Bb2", Content: "no match"},
	}}
	if got := mustStream(t, p, next); got.final.Type != agent.ChunkDone {
		t.Fatalf("final %+v", got.final)
	}
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(api.bodies[1]), &body); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range body.Input {
		types = append(types, it["type"].(string))
	}
	if !slices.Equal(types, []string{"message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"}) {
		t.Fatalf("input item types = %v", types)
	}
	if body.Input[1]["encrypted_content"] != "gAAAAABoXq3fENCRYPTEDREASONINGxyz==" || body.Input[1]["id"] != "rs_0a1b2c" {
		t.Fatalf("reasoning item = %v", body.Input[1])
	}
}

func TestIncompleteResponseEndsWithLength(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "incomplete.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	if got.text != "Partial" || got.final.Type != agent.ChunkDone || got.final.FinishReason != "length" {
		t.Fatalf("text %q final %+v", got.text, got.final)
	}
}

func wantError(t *testing.T, got streamed, class error) *agent.ProviderError {
	t.Helper()
	var pe *agent.ProviderError
	if got.final.Type != agent.ChunkError || !errors.As(got.final.Err, &pe) || !errors.Is(pe, class) {
		t.Fatalf("final = %+v, want a %v", got.final, class)
	}
	if strings.Contains(pe.Error(), testKey) {
		t.Fatalf("error shows the key: %v", pe)
	}
	return pe
}

func TestRateLimitWaitsRetryAfterThenSucceeds(t *testing.T) {
	api := newFakeAPI(t,
		apiFailure(429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1 on tokens per min (TPM)", map[string]string{"Retry-After": "3"}),
		recorded(t, "text.sse"))
	p, rec := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || got.text != "The answer is forty-two." {
		t.Fatalf("final %+v text %q", got.final, got.text)
	}
	if w := rec.waits(); !slices.Equal(w, []time.Duration{3 * time.Second}) || api.requests() != 2 {
		t.Fatalf("waits = %v after %d requests", w, api.requests())
	}
}

func TestRetryAfterMsIsPreferred(t *testing.T) {
	api := newFakeAPI(t,
		apiFailure(429, "requests", "rate_limit_exceeded", "slow down", map[string]string{"Retry-After": "1", "Retry-After-Ms": "1500"}),
		recorded(t, "text.sse"))
	p, rec := newTestProvider(t, api.config())
	mustStream(t, p, userRequest("x"))
	if w := rec.waits(); !slices.Equal(w, []time.Duration{1500 * time.Millisecond}) {
		t.Fatalf("waits = %v", w)
	}
}

func TestEmptyQuotaIsRejected(t *testing.T) {
	api := newFakeAPI(t, apiFailure(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota", nil))
	p, _ := newTestProvider(t, api.config())
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRejected)
	if api.requests() != 1 {
		t.Fatalf("%d requests", api.requests())
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	api := newFakeAPI(t, apiFailure(503, "server_error", "", "The server is overloaded", nil))
	cfg := api.config()
	cfg.MaxRetries = 2
	p, rec := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if pe.Status != 503 || api.requests() != 3 || !slices.Equal(rec.waits(), []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("error %+v after %d requests, waits %v", pe, api.requests(), rec.waits())
	}
}

func TestRejectionsAreNotRetriedAndRedactTheKey(t *testing.T) {
	api := newFakeAPI(t, apiFailure(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey, nil))
	p, _ := newTestProvider(t, api.config())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRejected)
	if pe.Status != 401 || api.requests() != 1 || !strings.Contains(pe.Message, "[REDACTED]") {
		t.Fatalf("error %+v after %d requests", pe, api.requests())
	}
}

func TestContextTooLong(t *testing.T) {
	api := newFakeAPI(t, apiFailure(400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model.", nil))
	p, _ := newTestProvider(t, api.config())
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrContextTooLong)

	api = newFakeAPI(t, recorded(t, "error_event.sse"))
	p, _ = newTestProvider(t, api.config())
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrContextTooLong)
	if api.requests() != 1 {
		t.Fatalf("%d requests", api.requests())
	}
}

func TestFailedResponseIsTransientAndRetried(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "failed.sse"), recorded(t, "text.sse"))
	p, _ := newTestProvider(t, api.config())
	if got := mustStream(t, p, userRequest("x")); got.final.Type != agent.ChunkDone || api.requests() != 2 {
		t.Fatalf("final %+v after %d requests", got.final, api.requests())
	}
	api = newFakeAPI(t, recorded(t, "failed.sse"))
	cfg := api.config()
	cfg.MaxRetries = -1
	p, _ = newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if !strings.Contains(pe.Message, "server_error") {
		t.Fatalf("error = %v", pe)
	}
}

func TestCutStreamBeforeOutputIsRetried(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "cut.sse"), recorded(t, "tools_reasoning.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || len(got.calls) != 2 || api.requests() != 2 {
		t.Fatalf("final %+v, %d calls after %d requests", got.final, len(got.calls), api.requests())
	}
}

func TestCutStreamAfterTextFails(t *testing.T) {
	text := recorded(t, "text.sse")
	text.body = text.body[:strings.Index(text.body, "event: response.completed")]
	api := newFakeAPI(t, text)
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	pe := wantError(t, got, agent.ErrStream)
	if got.text != "The answer is forty-two." || api.requests() != 1 || !strings.Contains(pe.Message, "ended before") {
		t.Fatalf("text %q, error %v after %d requests", got.text, pe, api.requests())
	}
}

func TestMalformedEventIsAStreamError(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "malformed.sse"))
	cfg := api.config()
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	if pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream); !strings.Contains(pe.Message, "malformed") {
		t.Fatalf("error = %v", pe)
	}
}

func TestJSONInsteadOfStreamIsAStreamError(t *testing.T) {
	r := apiFailure(200, "invalid_request_error", "", "stream is not supported here", nil)
	api := newFakeAPI(t, r)
	cfg := api.config()
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	if pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream); !strings.Contains(pe.Message, "not supported") {
		t.Fatalf("error = %v", pe)
	}
}

func TestCancelEndsTheStream(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n"))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, Model: "m"})
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := p.Stream(ctx, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if c := <-ch; c.Type != agent.ChunkText {
		t.Fatalf("first chunk %+v", c)
	}
	<-started
	cancel()
	for c := range ch {
		if c.Type == agent.ChunkError && !errors.Is(c.Err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", c.Err)
		}
	}
}

func TestModelWithoutReasoningIsAskedAgainWithoutTheInclude(t *testing.T) {
	api := newFakeAPI(t,
		apiFailure(400, "invalid_request_error", "", "Encrypted content is not supported with this model.", nil),
		recorded(t, "text.sse"))
	p, rec := newTestProvider(t, api.config())
	if got := mustStream(t, p, userRequest("x")); got.final.Type != agent.ChunkDone {
		t.Fatalf("final %+v", got.final)
	}
	if !strings.Contains(api.bodies[0], "reasoning.encrypted_content") || strings.Contains(api.bodies[1], "reasoning.encrypted_content") || len(rec.waits()) != 0 {
		t.Fatalf("bodies %q, waits %v", api.bodies, rec.waits())
	}
	// Once is enough: later requests no longer ask.
	mustStream(t, p, userRequest("y"))
	if strings.Contains(api.bodies[2], "include") {
		t.Fatalf("third body %s", api.bodies[2])
	}
}
