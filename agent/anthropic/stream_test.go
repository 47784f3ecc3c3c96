package anthropic

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestStreamsText(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "text.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("question"))
	if got.Text != "The answer is forty-two." || got.Pieces != 2 {
		t.Fatalf("text = %q in %d pieces", got.Text, got.Pieces)
	}
	if got.Final.Type != agent.ChunkDone || got.Final.FinishReason != "stop" {
		t.Fatalf("final = %+v", got.Final)
	}
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 25, Completion: 12}}) {
		t.Fatalf("usage = %+v", got.Usage)
	}
	h := api.Headers()[0]
	if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != "2023-06-01" ||
		h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "" {
		t.Fatalf("headers = %v", h)
	}
}

func TestParallelToolCallsWithSplitInputAndCachedUsage(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "parallel_tools.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("look"))
	want := []agent.ToolCall{
		{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Arguments: `{"path": "main.go"}`},
		{ID: "toolu_01CbjVMtadMzPkBb2yUNWzh9", Name: "grep", Arguments: `{"pattern": "func Test", "path": "."}`},
	}
	if got.Text != "Reading both files." || !slices.Equal(got.Calls, want) {
		t.Fatalf("text %q calls %+v", got.Text, got.Calls)
	}
	if got.Final.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", got.Final.FinishReason)
	}
	// The API counts cache reads apart from input; the agent's Prompt is the whole prompt.
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 472 + 3584, Completion: 89, Cached: 3584}}) {
		t.Fatalf("usage = %+v", got.Usage)
	}
}

func TestRateLimitWaitsRetryAfterThenSucceeds(t *testing.T) {
	api := agenttest.NewReplayServer(t,
		apiFailure(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"Retry-After": "3"}),
		agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	var reported []string
	ctx := agent.ContextWithRetryReporter(t.Context(), func(s string) { reported = append(reported, s) })
	ch, err := p.Stream(ctx, agenttest.UserRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	got := agenttest.Drain(t, ch)
	if got.Final.Type != agent.ChunkDone || got.Text != "The answer is forty-two." {
		t.Fatalf("final %+v text %q", got.Final, got.Text)
	}
	// Jitter is pinned to the top of its first range (500ms): the server's 3s wins.
	if w := rec.Waits(); !slices.Equal(w, []time.Duration{3 * time.Second}) {
		t.Fatalf("waits = %v", w)
	}
	if api.Received() != 2 || len(reported) != 1 || !strings.Contains(reported[0], "rate limit") {
		t.Fatalf("requests %d, reported %q", api.Received(), reported)
	}
}

func TestLongRetryAfterIsReturnedNotWaited(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(429, "rate_limit_error", "slow down", map[string]string{"Retry-After": "600"}))
	p, rec := newTestProvider(t, config(api))
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrRateLimited)
	if pe.RetryAfter != 10*time.Minute || pe.Status != 429 || len(rec.Waits()) != 0 || api.Received() != 1 {
		t.Fatalf("error %+v, waits %v, requests %d", pe, rec.Waits(), api.Received())
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(500, "api_error", "Internal server error", nil))
	cfg := config(api)
	cfg.MaxRetries = 2
	p, rec := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if pe.Status != 500 || api.Received() != 3 || len(rec.Waits()) != 2 {
		t.Fatalf("error %+v after %d requests, waits %v", pe, api.Received(), rec.Waits())
	}
	// Full jitter with the top of each range: 500ms, then 1s.
	if w := rec.Waits(); w[0] != 500*time.Millisecond || w[1] != time.Second {
		t.Fatalf("waits = %v", w)
	}
}

func TestOverloaded529IsTransientAndHonoursRetryAfter(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(529, "overloaded_error", "Overloaded", map[string]string{"Retry-After": "7"}), agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || !slices.Equal(rec.Waits(), []time.Duration{7 * time.Second}) {
		t.Fatalf("final %+v waits %v", got.Final, rec.Waits())
	}
}

func TestRejectionsAreNotRetriedAndRedactTheKey(t *testing.T) {
	for _, status := range []int{401, 403} {
		api := agenttest.NewReplayServer(t, apiFailure(status, "authentication_error", "invalid x-api-key "+testKey, nil))
		p, _ := newTestProvider(t, config(api))
		pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrRejected)
		if pe.Status != status || api.Received() != 1 || !strings.Contains(pe.Message, "[REDACTED]") {
			t.Fatalf("status %d: error %+v after %d requests", status, pe, api.Received())
		}
	}
}

func TestPromptTooLongIsContextTooLong(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum", nil))
	p, _ := newTestProvider(t, config(api))
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrContextTooLong)
	if errors.Is(pe, agent.ErrTransient) || api.Received() != 1 {
		t.Fatalf("error %+v after %d requests", pe, api.Received())
	}
}

func TestCutStreamBeforeOutputIsRetried(t *testing.T) {
	// The cut falls inside a tool call, which is never passed on partly, so
	// asking again loses nothing.
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "cut.sse"), agenttest.Recorded(t, "parallel_tools.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || len(got.Calls) != 2 || api.Received() != 2 {
		t.Fatalf("final %+v, %d calls after %d requests", got.Final, len(got.Calls), api.Received())
	}
}

func TestMalformedEventIsAStreamError(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "malformed.sse"))
	cfg := config(api)
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "malformed") {
		t.Fatalf("error = %v", pe)
	}
}

func TestOverloadedEventIsTransient(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "overloaded.sse"))
	cfg := config(api)
	cfg.MaxRetries = 1
	p, rec := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if pe.Message != "Overloaded" || api.Received() != 2 || len(rec.Waits()) != 1 {
		t.Fatalf("error %+v after %d requests", pe, api.Received())
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
	api := agenttest.NewReplayServer(t, agenttest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: body})
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	// Cache writes are prompt tokens too, billed but not read from the cache.
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 7 + 50 + 100, Completion: 3, Cached: 50}}) || got.Final.FinishReason != "stop" {
		t.Fatalf("usage %+v final %+v", got.Usage, got.Final)
	}
}

func TestJSONInsteadOfStreamIsAStreamError(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(200, "invalid_request_error", "stream is not supported here", nil))
	cfg := config(api)
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	if pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream); !strings.Contains(pe.Message, "not supported") {
		t.Fatalf("error = %v", pe)
	}
}

// max_output_bytes bounds the answer's text and tool calls on this wire
// as on the OpenAI one: an answer past it ends in ErrOutputTooLarge, one
// within it streams whole.
func TestMaxOutputBytesBoundsTextAndCalls(t *testing.T) {
	for _, tc := range []struct {
		bound int
		fits  bool
	}{{400, true}, {60, false}} {
		api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "parallel_tools.sse"))
		cfg := config(api)
		cfg.MaxOutputBytes = tc.bound
		p, _ := newTestProvider(t, cfg)
		got := agenttest.Collect(t, p, agenttest.UserRequest("look"))
		if !tc.fits {
			got.WantError(t, agent.ErrOutputTooLarge)
			if len(got.Calls) == 2 {
				t.Fatalf("bound %d: both calls passed on", tc.bound)
			}
			continue
		}
		got.WantDone(t, "tool_calls")
		if len(got.Calls) != 2 {
			t.Fatalf("bound %d: calls %+v", tc.bound, got.Calls)
		}
	}
}
