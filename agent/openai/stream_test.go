package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestStreamsTextInPieces(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "The answer is forty-two.", Usage: agent.Usage{Prompt: 10, Completion: 5}})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("question"))
	if got.text != "The answer is forty-two." || got.pieces < 2 {
		t.Fatalf("text = %q in %d pieces, want the whole text in several pieces", got.text, got.pieces)
	}
	if got.final.Type != agent.ChunkDone || got.final.FinishReason != "stop" {
		t.Fatalf("final = %+v", got.final)
	}
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 10, Completion: 5}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
}

func TestAccumulatesSplitToolCall(t *testing.T) {
	call := agent.ToolCall{ID: "call_abc123", Name: "read_file", Arguments: `{"path":"internal/sse/reader.go"}`}
	srv := agenttest.NewServer(t, agenttest.Turn{ToolCalls: []agent.ToolCall{call}})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("read it"))
	if !slices.Equal(got.calls, []agent.ToolCall{call}) {
		t.Fatalf("calls = %+v, want %+v", got.calls, call)
	}
	if got.final.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", got.final.FinishReason)
	}
}

func TestAccumulatesParallelToolCallsInIndexOrder(t *testing.T) {
	calls := []agent.ToolCall{
		{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_2", Name: "grep", Arguments: `{"pattern":"func Test","path":"."}`},
	}
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "Looking.", ToolCalls: calls})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("look"))
	if got.text != "Looking." || !slices.Equal(got.calls, calls) {
		t.Fatalf("got text %q calls %+v, want %+v", got.text, got.calls, calls)
	}
}

func TestReportsCachedUsage(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Turn{Text: "ok", Usage: agent.Usage{Prompt: 1000, Completion: 7, Cached: 896}})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 1000, Completion: 7, Cached: 896}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
}

func TestDeepSeekCacheHitTokens(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":1,"prompt_cache_hit_tokens":40,"prompt_cache_miss_tokens":10}}` + "\n\ndata: [DONE]\n\n"
	srv := agenttest.NewServer(t, agenttest.Raw(body))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	if !slices.Equal(got.usage, []agent.Usage{{Prompt: 50, Completion: 1, Cached: 40}}) {
		t.Fatalf("usage = %+v", got.usage)
	}
}

// wantError checks the final chunk is a ProviderError of class.
func wantError(t *testing.T, got streamed, class error) *agent.ProviderError {
	t.Helper()
	if got.final.Type != agent.ChunkError {
		t.Fatalf("final = %+v, want an error of class %v", got.final, class)
	}
	var pe *agent.ProviderError
	if !errors.As(got.final.Err, &pe) || pe.Class != class {
		t.Fatalf("error = %v (%T), want class %v", got.final.Err, got.final.Err, class)
	}
	return pe
}

func TestMalformedStreamIsStreamError(t *testing.T) {
	bad := agenttest.Raw("data: {nope\n\n")
	srv := agenttest.NewServer(t, bad, bad, bad, bad, bad)
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "malformed") {
		t.Errorf("message %q does not say the stream was malformed", pe.Message)
	}
	// Nothing reached the consumer, so each garbled answer was asked for again.
	if len(srv.Requests()) != 1+DefaultMaxRetries || len(sleeps.waits()) != DefaultMaxRetries {
		t.Errorf("requests = %d, sleeps = %d", len(srv.Requests()), len(sleeps.waits()))
	}
}

func TestBrokenStreamRetriedWhenNothingWasPassedOn(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Raw("data: {nope\n\n"),
		agenttest.CutToolCall("", agent.ToolCall{ID: "call_w", Name: "write_file", Arguments: `{"path":"x.go"}`}),
		agenttest.Turn{Text: "recovered"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || got.text != "recovered" || len(got.calls) != 0 {
		t.Fatalf("got %+v", got)
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("requests = %d", len(srv.Requests()))
	}
}

func TestStreamCutMidToolCall(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.CutToolCall("Writing the file", agent.ToolCall{
		ID: "call_w", Name: "write_file", Arguments: `{"path":"x.go","content":"package x\n"}`}))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	wantError(t, got, agent.ErrStream)
	if len(got.calls) != 0 {
		t.Fatalf("an incomplete tool call was emitted: %+v", got.calls)
	}
	if got.text != "Writing the file" {
		t.Fatalf("text before the cut = %q", got.text)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("a stream that had started was retried")
	}
}

func TestEOFWithoutDoneOrFinishIsStreamError(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Raw(`data: {"choices":[{"index":0,"delta":{"content":"half"}}]}`+"\n\n"))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "ended before") {
		t.Errorf("message = %q", pe.Message)
	}
}

func TestInStreamErrorObject(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.StreamFail("partial", "model overloaded mid-answer"))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	pe := wantError(t, got, agent.ErrStream)
	if !strings.Contains(pe.Message, "model overloaded mid-answer") || got.text != "partial" {
		t.Fatalf("message %q, text %q", pe.Message, got.text)
	}
}

func TestIdleTimeoutBetweenEvents(t *testing.T) {
	// A server that sends one event and then hangs until the client leaves.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"hm"}}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, IdleTimeout: 50 * time.Millisecond})
	start := time.Now()
	got := mustStream(t, p, userRequest("x"))
	pe := wantError(t, got, agent.ErrStream)
	if !strings.Contains(pe.Message, "idle") || got.text != "hm" {
		t.Fatalf("message %q, text %q", pe.Message, got.text)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("idle timeout took %v", elapsed)
	}
}

func TestIdleTimeoutBeforeHeadersIsRetriedOnce(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Delayed(time.Minute, agenttest.Turn{Text: "too late"}),
		agenttest.Delayed(time.Minute, agenttest.Turn{Text: "too late again"}),
		agenttest.Turn{Text: "never reached"})
	cfg := srv.ProviderConfig()
	cfg.IdleTimeout = 50 * time.Millisecond
	p, sleeps := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "idle timeout") {
		t.Errorf("message = %q", pe.Message)
	}
	if n := len(srv.Requests()); n != 2 || len(sleeps.waits()) != 1 {
		t.Fatalf("requests = %d, sleeps = %d; want exactly one retry", n, len(sleeps.waits()))
	}
}

func TestRateLimitRetriesAfterFloor(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Fail(429, "slow down", 7*time.Second),
		agenttest.Turn{Text: "finally"})
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	p.backoff.Rand = func(int64) int64 { return 0 } // jitter picks 0: only the floor remains
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || got.text != "finally" {
		t.Fatalf("final %+v text %q", got.final, got.text)
	}
	if w := sleeps.waits(); !slices.Equal(w, []time.Duration{7 * time.Second}) {
		t.Fatalf("waits = %v, want [7s] (the Retry-After floor)", w)
	}
	if len(srv.Requests()) != 2 {
		t.Fatalf("requests = %d, want 2", len(srv.Requests()))
	}
}

func TestServerErrorRetriedWithBackoff(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Fail(502, "bad gateway", 0),
		agenttest.Fail(503, "unavailable", 0),
		agenttest.Turn{Text: "up again"})
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	got := mustStream(t, p, userRequest("x"))
	if got.final.Type != agent.ChunkDone || got.text != "up again" {
		t.Fatalf("final %+v text %q", got.final, got.text)
	}
	// The jitter source picks the top: 500ms, then 1s.
	if w := sleeps.waits(); !slices.Equal(w, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("waits = %v", w)
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Fail(500, "boom 1", 0), agenttest.Fail(500, "boom 2", 0), agenttest.Fail(500, "boom 3", 0))
	cfg := srv.ProviderConfig()
	cfg.MaxRetries = 1
	p, _ := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if pe.Status != 500 || !strings.Contains(pe.Message, "boom 2") || len(srv.Requests()) != 2 {
		t.Fatalf("error %v after %d requests", pe, len(srv.Requests()))
	}

	srv2 := agenttest.NewServer(t, agenttest.Fail(500, "once", 0), agenttest.Turn{Text: "unused"})
	cfg = srv2.ProviderConfig()
	cfg.MaxRetries = -1
	p2, _ := newTestProvider(t, cfg)
	wantError(t, mustStream(t, p2, userRequest("x")), agent.ErrTransient)
	if len(srv2.Requests()) != 1 {
		t.Fatalf("MaxRetries<0 still retried")
	}
}

func TestLongRetryAfterIsReturnedNotWaited(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Fail(429, "come back in an hour", time.Hour), agenttest.Turn{Text: "unused"})
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRateLimited)
	if pe.RetryAfter != time.Hour || len(sleeps.waits()) != 0 {
		t.Fatalf("RetryAfter = %v, waits %v", pe.RetryAfter, sleeps.waits())
	}
	if !errors.Is(pe, agent.ErrTransient) {
		t.Fatalf("a rate limit must also count as transient")
	}
}

func TestUnauthorizedIsNotRetried(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Fail(401, "Incorrect API key provided.", 0), agenttest.Turn{Text: "unused"})
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRejected)
	if pe.Status != 401 || !strings.Contains(pe.Error(), "Incorrect API key provided.") || !strings.Contains(pe.Error(), "401") {
		t.Fatalf("error = %q", pe.Error())
	}
	if len(srv.Requests()) != 1 || len(sleeps.waits()) != 0 {
		t.Fatalf("401 was retried")
	}
}

func TestContextTooLongClassification(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.ContextTooLong(),
		agenttest.Fail(400, "Prompt is too long: 210000 tokens > 200000 maximum", 0),
		agenttest.Fail(400, "invalid value for temperature", 0))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrContextTooLong)
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrContextTooLong)
	wantError(t, mustStream(t, p, userRequest("x")), agent.ErrRejected)
	if len(srv.Requests()) != 3 {
		t.Fatalf("requests = %d, want 3 (none retried)", len(srv.Requests()))
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, sleeps := newTestProvider(t, agent.ProviderConfig{BaseURL: url, MaxRetries: 2})
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if !strings.Contains(pe.Message, "connection failed") || len(sleeps.waits()) != 2 {
		t.Fatalf("message %q, waits %v", pe.Message, sleeps.waits())
	}
}

func TestCancelMidStreamClosesChannel(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"working"}}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // the server would stream forever
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := p.Stream(ctx, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	first := <-ch
	if first.Type != agent.ChunkText || first.Text != "working" {
		t.Fatalf("first chunk = %+v", first)
	}
	<-started
	cancel()
	var last agent.Chunk
	for c := range ch { // must close; goleak in TestMain checks the goroutine ended
		last = c
	}
	if last.Type == agent.ChunkError && !errors.Is(last.Err, context.Canceled) {
		t.Fatalf("final error after cancel = %v, want context.Canceled", last.Err)
	}
	if last.Type == agent.ChunkDone {
		t.Fatalf("a cancelled stream reported success")
	}
}

func TestCancelWhileWaitingForRetry(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Fail(503, "busy", 0), agenttest.Turn{Text: "unused"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	ctx, cancel := context.WithCancel(t.Context())
	p.sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	ch, err := p.Stream(ctx, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, ch)
	if got.final.Type != agent.ChunkError || !errors.Is(got.final.Err, context.Canceled) {
		t.Fatalf("final = %+v, want a cancellation error", got.final)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("requested again after cancellation")
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	// Servers that echo the credential back, in several places.
	echo := "Invalid key " + testKey + " for this org; Authorization: Bearer " + testKey
	srv := agenttest.NewServer(t,
		agenttest.Fail(401, echo, 0),
		agenttest.StreamFail("", echo),
		agenttest.Raw("data: {\"bad\": "+testKey+"}\n\n"),
		agenttest.Fail(400, strings.Repeat("x", 290)+testKey, 0), // truncation must not leave a prefix
	)
	cfg := srv.ProviderConfig()
	cfg.APIKey = testKey
	p, _ := newTestProvider(t, cfg)
	for i := range 4 {
		got := mustStream(t, p, userRequest("x"))
		if got.final.Type != agent.ChunkError {
			t.Fatalf("step %d: want an error, got %+v", i, got.final)
		}
		msg := got.final.Err.Error()
		if strings.Contains(msg, testKey) || strings.Contains(msg, testKey[:12]) {
			t.Fatalf("step %d: error leaks the key: %q", i, msg)
		}
	}
	if got := srv.Requests()[0].Authorization; got != "Bearer "+testKey {
		t.Fatalf("Authorization = %q", got)
	}

	// An unreachable URL: the transport error must not carry the key either.
	bad, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: "http://127.0.0.1:1/v1", APIKey: testKey, MaxRetries: -1})
	got := mustStream(t, bad, userRequest("x"))
	if got.final.Type != agent.ChunkError || strings.Contains(got.final.Err.Error(), testKey) {
		t.Fatalf("final = %v", got.final.Err)
	}
}

func TestExhaustedScriptSaysSo(t *testing.T) {
	srv := agenttest.NewServer(t)
	cfg := srv.ProviderConfig()
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrTransient)
	if !strings.Contains(pe.Message, "script exhausted") {
		t.Fatalf("message = %q", pe.Message)
	}
}

func TestJSONInsteadOfStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "streaming is disabled", "code": 42}})
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL})
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "streaming is disabled") {
		t.Fatalf("message = %q", pe.Message)
	}
}

func TestReusesConnectionAcrossTurns(t *testing.T) {
	turn := agenttest.Turn{Text: "ok", ToolCalls: []agent.ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}, Usage: agent.Usage{Prompt: 1}}
	srv := agenttest.NewServer(t, turn, turn, turn, turn, turn)
	p, _ := newTestProvider(t, srv.ProviderConfig())
	for range 5 {
		if got := mustStream(t, p, userRequest("x")); got.final.Type != agent.ChunkDone {
			t.Fatalf("final = %+v", got.final)
		}
	}
	if n := srv.Connections(); n != 1 {
		t.Fatalf("5 sequential turns used %d connections, want 1 (keep-alive)", n)
	}
}
