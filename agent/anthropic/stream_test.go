package anthropic

import (
	"context"
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
	if got.final.Type != agent.ChunkDone || got.final.FinishReason != "stop" {
		t.Fatalf("final = %+v", got.final)
	}
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 25, Completion: 12}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
	h := api.headers[0]
	if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != "2023-06-01" ||
		h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "" {
		t.Fatalf("headers = %v", h)
	}
}

func TestRequestGoesToMessagesEndpoint(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL + "/", Model: "m", MaxRetries: -1})
	mustStream(t, p, userRequest("x"))
	if path != "/v1/messages" {
		t.Fatalf("path = %q", path)
	}
}

func TestParallelToolCallsWithSplitInputAndCachedUsage(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "parallel_tools.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("look"))
	want := []agent.ToolCall{
		{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Arguments: `{"path": "main.go"}`},
		{ID: "toolu_01CbjVMtadMzPkBb2yUNWzh9", Name: "grep", Arguments: `{"pattern": "func Test", "path": "."}`},
	}
	if got.text != "Reading both files." || !slices.Equal(got.calls, want) {
		t.Fatalf("text %q calls %+v", got.text, got.calls)
	}
	if got.final.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", got.final.FinishReason)
	}
	// The API counts cache reads apart from input; the agent's Prompt is the whole prompt.
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 472 + 3584, Completion: 89, Cached: 3584}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
}

// wantError checks the final chunk is a ProviderError of class.
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
		apiFailure(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"Retry-After": "3"}),
		recorded(t, "text.sse"))
	p, rec := newTestProvider(t, api.config())
	var reported []string
	ctx := agent.ContextWithRetryReporter(t.Context(), func(s string) { reported = append(reported, s) })
	ch, err := p.Stream(ctx, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, ch)
	if got.final.Type != agent.ChunkDone || got.text != "The answer is forty-two." {
		t.Fatalf("final %+v text %q", got.final, got.text)
	}
	// Jitter is pinned to the top of its first range (500ms): the server's 3s wins.
	if w := rec.waits(); !slices.Equal(w, []time.Duration{3 * time.Second}) {
		t.Fatalf("waits = %v", w)
	}
	if api.requests() != 2 || len(reported) != 1 || !strings.Contains(reported[0], "rate limit") {
		t.Fatalf("requests %d, reported %q", api.requests(), reported)
	}
}

func TestLongRetryAfterIsReturnedNotWaited(t *testing.T) {
	api := newFakeAPI(t, apiFailure(429, "rate_limit_error", "slow down", map[string]string{"Retry-After": "600"}))
	p, rec := newTestProvider(t, api.config())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRateLimited)
	if pe.RetryAfter != 10*time.Minute || pe.Status != 429 || len(rec.waits()) != 0 || api.requests() != 1 {
		t.Fatalf("error %+v, waits %v, requests %d", pe, rec.waits(), api.requests())
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	api := newFakeAPI(t, apiFailure(500, "api_error", "Internal server error", nil))
	cfg := api.config()
	cfg.MaxRetries = 2
	p, rec := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if pe.Status != 500 || api.requests() != 3 || len(rec.waits()) != 2 {
		t.Fatalf("error %+v after %d requests, waits %v", pe, api.requests(), rec.waits())
	}
	// Full jitter with the top of each range: 500ms, then 1s.
	if w := rec.waits(); w[0] != 500*time.Millisecond || w[1] != time.Second {
		t.Fatalf("waits = %v", w)
	}
}

func TestOverloaded529IsTransientAndHonoursRetryAfter(t *testing.T) {
	api := newFakeAPI(t, apiFailure(529, "overloaded_error", "Overloaded", map[string]string{"Retry-After": "7"}), recorded(t, "text.sse"))
	p, rec := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || !slices.Equal(rec.waits(), []time.Duration{7 * time.Second}) {
		t.Fatalf("final %+v waits %v", got.final, rec.waits())
	}
}

func TestRejectionsAreNotRetriedAndRedactTheKey(t *testing.T) {
	for _, status := range []int{401, 403} {
		api := newFakeAPI(t, apiFailure(status, "authentication_error", "invalid x-api-key "+testKey, nil))
		p, _ := newTestProvider(t, api.config())
		pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRejected)
		if pe.Status != status || api.requests() != 1 || !strings.Contains(pe.Message, "[REDACTED]") {
			t.Fatalf("status %d: error %+v after %d requests", status, pe, api.requests())
		}
	}
}

func TestPromptTooLongIsContextTooLong(t *testing.T) {
	api := newFakeAPI(t, apiFailure(400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum", nil))
	p, _ := newTestProvider(t, api.config())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrContextTooLong)
	if errors.Is(pe, agent.ErrTransient) || api.requests() != 1 {
		t.Fatalf("error %+v after %d requests", pe, api.requests())
	}
}

func TestCutStreamBeforeOutputIsRetried(t *testing.T) {
	// The cut falls inside a tool call, which is never passed on partly, so
	// asking again loses nothing.
	api := newFakeAPI(t, recorded(t, "cut.sse"), recorded(t, "parallel_tools.sse"))
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || len(got.calls) != 2 || api.requests() != 2 {
		t.Fatalf("final %+v, %d calls after %d requests", got.final, len(got.calls), api.requests())
	}
}

func TestCutStreamAfterTextFails(t *testing.T) {
	text := recorded(t, "text.sse")
	text.body = text.body[:strings.Index(text.body, "event: message_delta")]
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
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "malformed") {
		t.Fatalf("error = %v", pe)
	}
}

func TestOverloadedEventIsTransient(t *testing.T) {
	api := newFakeAPI(t, recorded(t, "overloaded.sse"))
	cfg := api.config()
	cfg.MaxRetries = 1
	p, rec := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if pe.Message != "Overloaded" || api.requests() != 2 || len(rec.waits()) != 1 {
		t.Fatalf("error %+v after %d requests", pe, api.requests())
	}
}

func TestCancelEndsTheStream(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"))
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

func TestUsageRevisedInMessageDelta(t *testing.T) {
	body := `event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":1}}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":7,"cache_read_input_tokens":50,"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`
	api := newFakeAPI(t, reply{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: body})
	p, _ := newTestProvider(t, api.config())
	got := mustStream(t, p, userRequest("x"))
	// Cache writes are prompt tokens too, billed but not read from the cache.
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 7 + 50 + 100, Completion: 3, Cached: 50}}) || got.final.FinishReason != "stop" {
		t.Fatalf("usage %+v final %+v", got.usage, got.final)
	}
}

func TestJSONInsteadOfStreamIsAStreamError(t *testing.T) {
	api := newFakeAPI(t, apiFailure(200, "invalid_request_error", "stream is not supported here", nil))
	cfg := api.config()
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	if pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream); !strings.Contains(pe.Message, "not supported") {
		t.Fatalf("error = %v", pe)
	}
}
