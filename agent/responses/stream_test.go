package responses

import (
	"encoding/json"
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
	if got.Final.Type != agent.ChunkDone || got.Final.FinishReason != "stop" || got.Final.ProviderState != nil {
		t.Fatalf("final = %+v", got.Final)
	}
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 25, Completion: 12}}) {
		t.Fatalf("usage = %+v", got.Usage)
	}
	if h := api.Headers()[0]; h.Get("Authorization") != "Bearer "+testKey || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers = %v", h)
	}
}

func TestParallelFunctionCallsReasoningAndCachedUsage(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "tools_reasoning.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("look"))
	want := []agent.ToolCall{
		{ID: "call_Aa1", Name: "read_file", Arguments: `{"path":"main.go"}`},
		{ID: "call_Bb2", Name: "grep", Arguments: `{"pattern":"func Test","path":"."}`},
	}
	if !slices.Equal(got.Calls, want) || got.Final.FinishReason != "tool_calls" {
		t.Fatalf("calls %+v, final %+v", got.Calls, got.Final)
	}
	if !slices.Equal(got.Usage, []agent.Usage{{Prompt: 4056, Completion: 89, Cached: 3584}}) {
		t.Fatalf("usage = %+v", got.Usage)
	}
	items := reasoningItems(got.Final.ProviderState)
	if len(items) != 1 || !strings.Contains(string(items[0]), `"encrypted_content":"gAAAAABoXq3fENCRYPTEDREASONINGxyz=="`) {
		t.Fatalf("state = %s", got.Final.ProviderState)
	}
}

// The reasoning of one turn goes back, unchanged and before the calls it
// led to, on the next request.
func TestReasoningIsSentBackOnTheNextTurn(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "tools_reasoning.sse"), agenttest.Recorded(t, "text.sse"))
	p, _ := newTestProvider(t, config(api))
	first := agenttest.Collect(t, p, agenttest.UserRequest("look"))
	next := agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "look"},
		{Role: agent.RoleAssistant, ToolCalls: first.Calls, ProviderState: first.Final.ProviderState},
		{Role: agent.RoleTool, ToolCallID: "call_Aa1", Content: "package main"},
		{Role: agent.RoleTool, ToolCallID: "call_Bb2", Content: "no match"},
	}}
	if got := agenttest.Collect(t, p, next); got.Final.Type != agent.ChunkDone {
		t.Fatalf("final %+v", got.Final)
	}
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(api.Bodies()[1]), &body); err != nil {
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
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "incomplete.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Text != "Partial" || got.Final.Type != agent.ChunkDone || got.Final.FinishReason != "length" {
		t.Fatalf("text %q final %+v", got.Text, got.Final)
	}
}

func TestRateLimitWaitsRetryAfterThenSucceeds(t *testing.T) {
	api := agenttest.NewReplayServer(t,
		apiFailure(429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1 on tokens per min (TPM)", map[string]string{"Retry-After": "3"}),
		agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || got.Text != "The answer is forty-two." {
		t.Fatalf("final %+v text %q", got.Final, got.Text)
	}
	if w := rec.Waits(); !slices.Equal(w, []time.Duration{3 * time.Second}) || api.Received() != 2 {
		t.Fatalf("waits = %v after %d requests", w, api.Received())
	}
}

func TestRetryAfterMsIsPreferred(t *testing.T) {
	api := agenttest.NewReplayServer(t,
		apiFailure(429, "requests", "rate_limit_exceeded", "slow down", map[string]string{"Retry-After": "1", "Retry-After-Ms": "1500"}),
		agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if w := rec.Waits(); !slices.Equal(w, []time.Duration{1500 * time.Millisecond}) {
		t.Fatalf("waits = %v", w)
	}
}

func TestEmptyQuotaIsRejected(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota", nil))
	p, _ := newTestProvider(t, config(api))
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrRejected)
	if api.Received() != 1 {
		t.Fatalf("%d requests", api.Received())
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(503, "server_error", "", "The server is overloaded", nil))
	cfg := config(api)
	cfg.MaxRetries = 2
	p, rec := newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if pe.Status != 503 || api.Received() != 3 || !slices.Equal(rec.Waits(), []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("error %+v after %d requests, waits %v", pe, api.Received(), rec.Waits())
	}
}

func TestRejectionsAreNotRetriedAndRedactTheKey(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey, nil))
	p, _ := newTestProvider(t, config(api))
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrRejected)
	if pe.Status != 401 || api.Received() != 1 || !strings.Contains(pe.Message, "[REDACTED]") {
		t.Fatalf("error %+v after %d requests", pe, api.Received())
	}
}

func TestContextTooLong(t *testing.T) {
	api := agenttest.NewReplayServer(t, apiFailure(400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model.", nil))
	p, _ := newTestProvider(t, config(api))
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrContextTooLong)

	api = agenttest.NewReplayServer(t, agenttest.Recorded(t, "error_event.sse"))
	p, _ = newTestProvider(t, config(api))
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrContextTooLong)
	if api.Received() != 1 {
		t.Fatalf("%d requests", api.Received())
	}
}

func TestFailedResponseIsTransientAndRetried(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "failed.sse"), agenttest.Recorded(t, "text.sse"))
	p, _ := newTestProvider(t, config(api))
	if got := agenttest.Collect(t, p, agenttest.UserRequest("x")); got.Final.Type != agent.ChunkDone || api.Received() != 2 {
		t.Fatalf("final %+v after %d requests", got.Final, api.Received())
	}
	api = agenttest.NewReplayServer(t, agenttest.Recorded(t, "failed.sse"))
	cfg := config(api)
	cfg.MaxRetries = -1
	p, _ = newTestProvider(t, cfg)
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrTransient)
	if !strings.Contains(pe.Message, "server_error") {
		t.Fatalf("error = %v", pe)
	}
}

func TestCutStreamBeforeOutputIsRetried(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "cut.sse"), agenttest.Recorded(t, "tools_reasoning.sse"))
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
	if pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream); !strings.Contains(pe.Message, "malformed") {
		t.Fatalf("error = %v", pe)
	}
}

func TestJSONInsteadOfStreamIsAStreamError(t *testing.T) {
	r := apiFailure(200, "invalid_request_error", "", "stream is not supported here", nil)
	api := agenttest.NewReplayServer(t, r)
	cfg := config(api)
	cfg.MaxRetries = -1
	p, _ := newTestProvider(t, cfg)
	if pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream); !strings.Contains(pe.Message, "not supported") {
		t.Fatalf("error = %v", pe)
	}
}

func TestModelWithoutReasoningIsAskedAgainWithoutTheInclude(t *testing.T) {
	api := agenttest.NewReplayServer(t,
		apiFailure(400, "invalid_request_error", "", "Encrypted content is not supported with this model.", nil),
		agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	if got := agenttest.Collect(t, p, agenttest.UserRequest("x")); got.Final.Type != agent.ChunkDone {
		t.Fatalf("final %+v", got.Final)
	}
	if !strings.Contains(api.Bodies()[0], "reasoning.encrypted_content") || strings.Contains(api.Bodies()[1], "reasoning.encrypted_content") || len(rec.Waits()) != 0 {
		t.Fatalf("bodies %q, waits %v", api.Bodies(), rec.Waits())
	}
	// Once is enough: later requests no longer ask.
	agenttest.Collect(t, p, agenttest.UserRequest("y"))
	if strings.Contains(api.Bodies()[2], "include") {
		t.Fatalf("third body %s", api.Bodies()[2])
	}
}

// max_output_bytes bounds the answer (text and function calls), not the
// reasoning that travels back with it.
func TestMaxOutputBytesCountsCallsNotReasoning(t *testing.T) {
	rec := agenttest.Recorded(t, "tools_reasoning.sse")
	long := "gAAAAAB" + strings.Repeat("x", 4000) + "=="
	rec.Body = strings.ReplaceAll(rec.Body, "gAAAAABoXq3fENCRYPTEDREASONINGxyz==", long)
	for _, tc := range []struct {
		bound int
		fits  bool
	}{{200, true}, {60, false}} {
		api := agenttest.NewReplayServer(t, rec)
		cfg := config(api)
		cfg.MaxOutputBytes = tc.bound
		p, _ := newTestProvider(t, cfg)
		got := agenttest.Collect(t, p, agenttest.UserRequest("look"))
		if !tc.fits {
			got.WantError(t, agent.ErrOutputTooLarge)
			continue
		}
		got.WantDone(t, "tool_calls")
		if items := reasoningItems(got.Final.ProviderState); len(items) != 1 || !strings.Contains(string(items[0]), long) {
			t.Fatalf("bound %d: state %.200s", tc.bound, got.Final.ProviderState)
		}
	}
}
