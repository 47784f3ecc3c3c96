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
	"reasonix/agent/httpstream"
)

func TestDeepSeekCacheHitTokens(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":1,"prompt_cache_hit_tokens":40,"prompt_cache_miss_tokens":10}}` + "\n\ndata: [DONE]\n\n"
	srv := agenttest.NewServer(t, agenttest.Raw(body))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 50, Completion: 1, Cached: 40}}) {
		t.Fatalf("usage = %+v", got.Usage)
	}
}

func TestMalformedStreamIsStreamError(t *testing.T) {
	bad := agenttest.Raw("data: {nope\n\n")
	srv := agenttest.NewServer(t, bad, bad, bad, bad, bad)
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "malformed") {
		t.Errorf("message %q does not say the stream was malformed", pe.Message)
	}
	// Nothing reached the consumer, so each garbled answer was asked for again.
	if len(srv.Requests()) != 1+httpstream.DefaultMaxRetries || len(sleeps.Waits()) != httpstream.DefaultMaxRetries {
		t.Errorf("requests = %d, sleeps = %d", len(srv.Requests()), len(sleeps.Waits()))
	}
}

func TestBrokenStreamRetriedWhenNothingWasPassedOn(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Raw("data: {nope\n\n"),
		agenttest.CutToolCall("", agent.ToolCall{ID: "call_w", Name: "write_file", Arguments: `{"path":"x.go"}`}),
		agenttest.Turn{Text: "recovered"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || got.Text != "recovered" || len(got.Calls) != 0 {
		t.Fatalf("got %+v", got)
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("requests = %d", len(srv.Requests()))
	}
}

func TestEOFWithoutDoneOrFinishIsStreamError(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Raw(`data: {"choices":[{"index":0,"delta":{"content":"half"}}]}`+"\n\n"))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "ended before") {
		t.Errorf("message = %q", pe.Message)
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
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "idle timeout") {
		t.Errorf("message = %q", pe.Message)
	}
	if n := len(srv.Requests()); n != 2 || len(sleeps.Waits()) != 1 {
		t.Fatalf("requests = %d, sleeps = %d; want exactly one retry", n, len(sleeps.Waits()))
	}
}

func TestRateLimitRetriesAfterFloor(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Fail(429, "slow down", 7*time.Second),
		agenttest.Turn{Text: "finally"})
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	p.client.Backoff.Rand = func(int64) int64 { return 0 } // jitter picks 0: only the floor remains
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || got.Text != "finally" {
		t.Fatalf("final %+v text %q", got.Final, got.Text)
	}
	if w := sleeps.Waits(); !slices.Equal(w, []time.Duration{7 * time.Second}) {
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
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || got.Text != "up again" {
		t.Fatalf("final %+v text %q", got.Final, got.Text)
	}
	// The jitter source picks the top: 500ms, then 1s.
	if w := sleeps.Waits(); !slices.Equal(w, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("waits = %v", w)
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Fail(500, "boom 1", 0), agenttest.Fail(500, "boom 2", 0), agenttest.Fail(500, "boom 3", 0))
	cfg := srv.ProviderConfig()
	cfg.MaxRetries = 1
	p, _ := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if pe.Status != 500 || !strings.Contains(pe.Message, "boom 2") || len(srv.Requests()) != 2 {
		t.Fatalf("error %v after %d requests", pe, len(srv.Requests()))
	}

	srv2 := agenttest.NewServer(t, agenttest.Fail(500, "once", 0), agenttest.Turn{Text: "unused"})
	cfg = srv2.ProviderConfig()
	cfg.MaxRetries = -1
	p2, _ := newTestProvider(t, cfg)
	agenttest.Collect(t, p2, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if len(srv2.Requests()) != 1 {
		t.Fatalf("MaxRetries<0 still retried")
	}
}

func TestContextTooLongClassification(t *testing.T) {
	// The wire's context_length_exceeded code is in the conformance suite;
	// these are the messages of servers that send no code.
	srv := agenttest.NewServer(t,
		agenttest.Fail(400, "Prompt is too long: 210000 tokens > 200000 maximum", 0),
		agenttest.Fail(400, "invalid value for temperature", 0))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrContextTooLong)
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrRejected)
	if len(srv.Requests()) != 2 {
		t.Fatalf("requests = %d, want 2 (none retried)", len(srv.Requests()))
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, sleeps := newTestProvider(t, agent.ProviderConfig{BaseURL: url, MaxRetries: 2})
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if !strings.Contains(pe.Message, "connection failed") || len(sleeps.Waits()) != 2 {
		t.Fatalf("message %q, waits %v", pe.Message, sleeps.Waits())
	}
}

func TestCancelWhileWaitingForRetry(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Fail(503, "busy", 0), agenttest.Turn{Text: "unused"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	ctx, cancel := context.WithCancel(t.Context())
	p.client.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	ch, err := p.Stream(ctx, agenttest.UserRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	got := agenttest.Drain(t, ch)
	if got.Final.Type != agent.ChunkError || !errors.Is(got.Final.Err, context.Canceled) {
		t.Fatalf("final = %+v, want a cancellation error", got.Final)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("requested again after cancellation")
	}
}

func TestExhaustedScriptSaysSo(t *testing.T) {
	srv := agenttest.NewServer(t)
	cfg := srv.ProviderConfig()
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
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
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "streaming is disabled") {
		t.Fatalf("message = %q", pe.Message)
	}
}

func TestReusesConnectionAcrossTurns(t *testing.T) {
	turn := agenttest.Turn{Text: "ok", ToolCalls: []agent.ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}, Usage: agent.Usage{Prompt: 1}}
	srv := agenttest.NewServer(t, turn, turn, turn, turn, turn)
	p, _ := newTestProvider(t, srv.ProviderConfig())
	for range 5 {
		if got := agenttest.Collect(t, p, agenttest.UserRequest("x")); got.Final.Type != agent.ChunkDone {
			t.Fatalf("final = %+v", got.Final)
		}
	}
	if n := srv.Connections(); n != 1 {
		t.Fatalf("5 sequential turns used %d connections, want 1 (keep-alive)", n)
	}
}
