package agenttest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

// secretKey is the API key the suite configures; no error may carry it.
const secretKey = "sk-conformance-SECRET-0123456789"

// TestProvider runs TestProviderFor over the OpenAI chat completions wire.
func TestProvider(t *testing.T, mk func(t *testing.T, cfg agent.ProviderConfig) agent.Provider) {
	t.Helper()
	TestProviderFor(t, "openai", mk)
}

// TestRegisteredKind runs TestProviderFor over providers of kind built
// through agent.Providers, exactly as a configuration builds them.
func TestRegisteredKind(t *testing.T, kind string) {
	t.Helper()
	TestProviderFor(t, kind, func(t *testing.T, cfg agent.ProviderConfig) agent.Provider {
		cfg.Kind = kind
		p, err := agent.Providers.New(cfg)
		if err != nil {
			t.Fatalf("building a %s provider: %v", kind, err)
		}
		return p
	})
}

// TestProviderFor checks that providers built by mk keep the agent.Provider
// contract against a fake Server speaking the wire of provider kind (one of
// Kinds), in subtests: text streamed in pieces, tool-call deltas split
// across chunks assembled into whole calls, usage with cached tokens
// reported once, the chunk order (text, calls, usage, exactly one terminal
// chunk, then a closed channel), failures typed as *agent.ProviderError of
// the right class (429 with its Retry-After, 401 rejected and not retried,
// 5xx, a cut, garbled or broken stream, a context overflow, an idle
// stream before or after output, a server that sends no headers, an
// answer past MaxOutputBytes, a body past MaxStreamBytes),
// the API key kept out of every error, concurrent streams, and
// cancellation closing the channel promptly without leaking goroutines.
//
// mk builds a fresh provider for one subtest from cfg, which points at the
// subtest's Server (BaseURL, Model, APIKey, and sometimes MaxRetries and
// IdleTimeout); mk sets the Kind. The suite closes idle connections of a
// provider that has a CloseIdleConnections method when the subtest ends.
// Retries wait for real, so the suite scripts failures a provider must
// not retry, or disables retries through cfg. Subtests do not run in
// parallel, and the cancellation subtests check for leaked goroutines, so
// TestProviderFor must not run in parallel with other tests of the package.
func TestProviderFor(t *testing.T, kind string, mk func(t *testing.T, cfg agent.ProviderConfig) agent.Provider) {
	t.Helper()
	if _, ok := wires[kind]; !ok {
		t.Fatalf("agenttest: no fake speaks the wire of provider kind %q (known: %v)", kind, Kinds())
	}
	NewServer := func(t testing.TB, turns ...Turn) *Server {
		t.Helper()
		return NewServerFor(t, kind, turns...)
	}
	build := func(t *testing.T, srv *Server, edit func(*agent.ProviderConfig)) agent.Provider {
		cfg := srv.ProviderConfig()
		cfg.Kind = ""
		cfg.APIKey = secretKey
		if edit != nil {
			edit(&cfg)
		}
		p := mk(t, cfg)
		t.Cleanup(func() { closeIdle(p) })
		return p
	}

	t.Run("Name", func(t *testing.T) {
		p := build(t, NewServer(t), nil)
		if strings.TrimSpace(p.Name()) == "" {
			t.Errorf("empty provider name")
		}
	})

	t.Run("Text", func(t *testing.T) {
		usage := agent.Usage{Prompt: 1000, Completion: 7, Cached: 896}
		srv := NewServer(t, Turn{Text: "The answer is forty-two.", Usage: usage})
		got := Collect(t, build(t, srv, nil), UserRequest("question"))
		got.WantDone(t, "stop")
		if got.Text != "The answer is forty-two." {
			t.Errorf("text = %q", got.Text)
		}
		// The server sent the text in three deltas; a provider that
		// buffers the whole answer leaves a chat silent until the end.
		if got.Pieces < 2 {
			t.Errorf("text arrived in %d piece(s), want the server's deltas passed on as they come", got.Pieces)
		}
		if !slices.Equal(got.Usage, []agent.Usage{usage}) {
			t.Errorf("usage = %+v, want [%+v]", got.Usage, usage)
		}
	})

	t.Run("Thinking", func(t *testing.T) {
		// Reasoning the wire shows (a thinking block, reasoning_content, a
		// Responses reasoning item) streams as ChunkThinking before the
		// text, and is no part of it.
		srv := NewServer(t, Turn{Thinking: "The user wants the answer.", Text: "Forty-two."})
		got := Collect(t, build(t, srv, nil), UserRequest("question"))
		got.WantDone(t, "stop")
		if got.Thinking != "The user wants the answer." || got.Text != "Forty-two." {
			t.Errorf("thinking %q text %q", got.Thinking, got.Text)
		}
	})

	t.Run("ToolCalls", func(t *testing.T) {
		calls := []agent.ToolCall{
			{ID: "call_abc123", Name: "read_file", Arguments: `{"path":"internal/sse/reader.go"}`},
			{ID: "call_def456", Name: "grep", Arguments: `{"pattern":"func Test","path":"."}`},
			{ID: "call_ghi789", Name: "ls", Arguments: `{"path":"docs/zh-CN/ü"}`},
		}
		srv := NewServer(t, Turn{Text: "Looking.", ToolCalls: calls, Usage: agent.Usage{Prompt: 5, Completion: 9}})
		got := Collect(t, build(t, srv, nil), UserRequest("look"))
		got.WantDone(t, "tool_calls")
		if got.Text != "Looking." || !slices.Equal(got.Calls, calls) {
			t.Errorf("got text %q calls %+v, want %q and %+v (whole, in index order)", got.Text, got.Calls, "Looking.", calls)
		}
	})

	t.Run("Request", func(t *testing.T) {
		srv := NewServer(t, Turn{Text: "ok"})
		p := build(t, srv, nil)
		req := agent.Request{
			Messages: []agent.Message{
				{Role: agent.RoleSystem, Content: "You are terse."},
				{Role: agent.RoleUser, Content: "list files"},
				{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "ls", Arguments: `{}`}}},
				{Role: agent.RoleTool, ToolCallID: "c1", Name: "ls", Content: "a.go\nb.go"},
			},
			Tools: []agent.ToolSchema{{Name: "ls", Description: "List files.", Parameters: []byte(`{"type":"object","properties":{}}`)}},
		}
		Collect(t, p, req).WantDone(t, "stop")
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("server got %d requests, want 1", len(reqs))
		}
		r := reqs[0]
		if r.Model != "fake-model" || !r.Stream {
			t.Errorf("request model %q stream %v, want the configured model, streamed", r.Model, r.Stream)
		}
		if r.APIKey != secretKey {
			t.Errorf("the configured API key was not sent (got %q)", r.APIKey)
		}
		if len(r.Messages) != len(req.Messages) {
			t.Fatalf("sent %d messages, want %d: %+v", len(r.Messages), len(req.Messages), r.Messages)
		}
		for i, m := range req.Messages {
			s := r.Messages[i]
			if s.Role != m.Role || s.Content != m.Content || s.ToolCallID != m.ToolCallID || !slices.Equal(s.ToolCalls, m.ToolCalls) {
				t.Errorf("message %d sent as %+v, want %+v", i, s, m)
			}
		}
		if len(r.Tools) != 1 || r.Tools[0].Name != "ls" || r.Tools[0].Description != "List files." {
			t.Errorf("tools sent as %+v", r.Tools)
		}
	})

	t.Run("RequestModelOverrides", func(t *testing.T) {
		srv := NewServer(t, Turn{Text: "ok"})
		req := UserRequest("x")
		req.Model = "other-model"
		Collect(t, build(t, srv, nil), req).WantDone(t, "stop")
		if r := srv.Requests(); len(r) != 1 || r[0].Model != "other-model" {
			t.Errorf("Request.Model was not used: %+v", r)
		}
	})

	t.Run("RateLimitedLongRetryAfter", func(t *testing.T) {
		// A wait this long must be left to the caller, which can park the
		// task instead of holding a worker for an hour.
		srv := NewServer(t, Fail(429, "Rate limit reached, come back in an hour", time.Hour), Turn{Text: "unused"})
		start := time.Now()
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		pe := got.WantError(t, agent.ErrRateLimited)
		if pe != nil && (pe.RetryAfter != time.Hour || pe.Status != 429) {
			t.Errorf("RetryAfter %v status %d, want 1h and 429", pe.RetryAfter, pe.Status)
		}
		if !errors.Is(got.Final.Err, agent.ErrTransient) {
			t.Errorf("a rate limit must also count as transient: %v", got.Final.Err)
		}
		if d := time.Since(start); d > promptly {
			t.Errorf("took %v: the provider waited out the Retry-After itself", d)
		}
	})

	t.Run("RateLimitedNoRetries", func(t *testing.T) {
		srv := NewServer(t, Fail(429, "slow down", time.Second), Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.MaxRetries = -1 })
		pe := Collect(t, p, UserRequest("x")).WantError(t, agent.ErrRateLimited)
		if pe != nil && pe.RetryAfter != time.Second {
			t.Errorf("RetryAfter = %v, want the server's 1s", pe.RetryAfter)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests with MaxRetries < 0, want 1", n)
		}
	})

	t.Run("RateLimitedShortRetryAfter", func(t *testing.T) {
		// A provider may retry by itself after a short wait, or hand the
		// typed error with the wait to its caller; both keep the contract.
		srv := NewServer(t, Fail(429, "slow down", time.Second), Turn{Text: "finally"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		switch got.Final.Type {
		case agent.ChunkDone:
			if got.Text != "finally" || len(srv.Requests()) != 2 {
				t.Errorf("after a retry: text %q, %d requests", got.Text, len(srv.Requests()))
			}
		default:
			if pe := got.WantError(t, agent.ErrRateLimited); pe != nil && pe.RetryAfter != time.Second {
				t.Errorf("RetryAfter = %v, want 1s", pe.RetryAfter)
			}
		}
	})

	t.Run("Unauthorized", func(t *testing.T) {
		srv := NewServer(t, Fail(401, "Incorrect API key provided.", 0), Turn{Text: "unused"})
		pe := Collect(t, build(t, srv, nil), UserRequest("x")).WantError(t, agent.ErrRejected)
		if pe != nil && (pe.Status != 401 || !strings.Contains(pe.Message, "Incorrect API key provided.")) {
			t.Errorf("status %d message %q, want 401 and the server's message", pe.Status, pe.Message)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("a rejected request was sent %d times", n)
		}
	})

	t.Run("ServerError", func(t *testing.T) {
		srv := NewServer(t, Fail(500, "boom", 0), Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.MaxRetries = -1 })
		pe := Collect(t, p, UserRequest("x")).WantError(t, agent.ErrTransient)
		if pe != nil && pe.Status != 500 {
			t.Errorf("status = %d", pe.Status)
		}
	})

	t.Run("ContextTooLong", func(t *testing.T) {
		srv := NewServer(t, ContextTooLong(), Turn{Text: "unused"})
		Collect(t, build(t, srv, nil), UserRequest("x")).WantError(t, agent.ErrContextTooLong)
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("an overflowing request was sent %d times", n)
		}
	})

	t.Run("StreamCut", func(t *testing.T) {
		srv := NewServer(t, CutToolCall("Writing the file", agent.ToolCall{
			ID: "call_w", Name: "write_file", Arguments: `{"path":"x.go","content":"package x\n"}`}), Turn{Text: "unused"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		got.WantError(t, agent.ErrStream)
		if len(got.Calls) != 0 {
			t.Errorf("an incomplete tool call was emitted: %+v", got.Calls)
		}
		// Text already passed on cannot be taken back: a retry would
		// repeat it.
		if got.Text != "Writing the file" {
			t.Errorf("text = %q, want the text before the cut, once", got.Text)
		}
	})

	t.Run("StreamErrorObject", func(t *testing.T) {
		// Wires name a server failure mid-answer differently (a broken
		// stream, an overloaded server); either is transient.
		srv := NewServer(t, StreamFail("partial", "model overloaded mid-answer"), Turn{Text: "unused"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		pe := got.WantError(t, agent.ErrTransient)
		if pe != nil && !strings.Contains(pe.Message, "model overloaded mid-answer") {
			t.Errorf("message %q does not carry the server's", pe.Message)
		}
		if got.Text != "partial" {
			t.Errorf("text = %q", got.Text)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests: a failure after text was passed on must not be retried", n)
		}
	})

	t.Run("MalformedStream", func(t *testing.T) {
		srv := NewServer(t, Raw("data: {nope\n\n"), Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.MaxRetries = -1 })
		Collect(t, p, UserRequest("x")).WantError(t, agent.ErrStream)
	})

	t.Run("MalformedEventAfterText", func(t *testing.T) {
		srv := NewServer(t, Garbled("so far so good"), Turn{Text: "unused"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		got.WantError(t, agent.ErrStream)
		if got.Text != "so far so good" {
			t.Errorf("text = %q, want the text before the malformed event, once", got.Text)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests: a failure after text was passed on must not be retried", n)
		}
	})

	t.Run("StreamCutBeforeOutputIsRetried", func(t *testing.T) {
		// Nothing reached the caller, so asking again loses nothing.
		srv := NewServer(t, CutToolCall("", agent.ToolCall{ID: "call_w", Name: "write_file", Arguments: `{"path":"x.go"}`}),
			Turn{Text: "recovered"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		got.WantDone(t, "stop")
		if got.Text != "recovered" || len(got.Calls) != 0 || len(srv.Requests()) != 2 {
			t.Errorf("text %q calls %+v after %d requests, want the second answer alone after 2", got.Text, got.Calls, len(srv.Requests()))
		}
	})

	t.Run("ServerErrorRetried", func(t *testing.T) {
		srv := NewServer(t, Fail(503, "busy", 0), Turn{Text: "back"})
		got := Collect(t, build(t, srv, nil), UserRequest("x"))
		got.WantDone(t, "stop")
		if got.Text != "back" || len(srv.Requests()) != 2 {
			t.Errorf("text %q after %d requests, want %q after 2", got.Text, len(srv.Requests()), "back")
		}
	})

	t.Run("OutputTooLarge", func(t *testing.T) {
		// max_output_bytes bounds what the caller would hold of one answer,
		// text and tool calls alike, not the framing around them; past it
		// the stream fails and asking again would only repeat it.
		// A wire that repeats a call's arguments when it completes must
		// count them once.
		const bound = 512
		big := strings.Repeat("y", bound)
		write := func(content string) []agent.ToolCall {
			return []agent.ToolCall{{ID: "call_1", Name: "write_file", Arguments: `{"content":"` + content + `"}`}}
		}
		for _, tc := range []struct {
			turn Turn
			fits bool
		}{
			{Turn{Text: big[:bound*3/4]}, true},
			{Turn{Text: "Writing.", ToolCalls: write(big[:bound/2])}, true},
			{Turn{Text: big + "y"}, false},
			{Turn{Text: "Writing.", ToolCalls: write(big)}, false},
		} {
			srv := NewServer(t, tc.turn)
			got := Collect(t, build(t, srv, func(c *agent.ProviderConfig) { c.MaxOutputBytes = bound }), UserRequest("x"))
			if tc.fits {
				got.WantDone(t, tc.turn.finishReason())
				continue
			}
			pe := got.WantError(t, agent.ErrOutputTooLarge)
			if !strings.Contains(pe.Message, "max_output_bytes") || len(got.Calls) != 0 || len(srv.Requests()) != 1 {
				t.Errorf("error %q, calls %+v after %d requests; want max_output_bytes named, no call, 1 request", pe.Message, got.Calls, len(srv.Requests()))
			}
		}
	})

	t.Run("RunawayStream", func(t *testing.T) {
		// Keep-alive comments are no answer and reset no idle watchdog:
		// only max_stream_bytes stops a server that sends them forever.
		srv := NewServer(t, Raw(strings.Repeat(": keep-alive\n\n", 2000)))
		got := Collect(t, build(t, srv, func(c *agent.ProviderConfig) { c.MaxStreamBytes = 4096 }), UserRequest("x"))
		pe := got.WantError(t, agent.ErrOutputTooLarge)
		if !strings.Contains(pe.Message, "4096 bytes (max_stream_bytes)") || len(srv.Requests()) != 1 {
			t.Errorf("error %q after %d requests, want max_stream_bytes named after 1", pe.Message, len(srv.Requests()))
		}
		if agent.Reason(pe) != "provider.output_too_large" {
			t.Errorf("reason = %q", agent.Reason(pe))
		}
	})

	t.Run("IdleStream", func(t *testing.T) {
		srv := NewServer(t, Stalled("hm"), Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.IdleTimeout = 100 * time.Millisecond })
		start := time.Now()
		got := Collect(t, p, UserRequest("x"))
		got.WantError(t, agent.ErrStream)
		if got.Text != "hm" {
			t.Errorf("text = %q", got.Text)
		}
		if d := time.Since(start); d > promptly {
			t.Errorf("an idle timeout of 100ms took %v", d)
		}
	})

	t.Run("IdleBeforeOutput", func(t *testing.T) {
		srv := NewServer(t, Stalled(""), Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.IdleTimeout = 100 * time.Millisecond; c.MaxRetries = -1 })
		pe := Collect(t, p, UserRequest("x")).WantError(t, agent.ErrStream)
		if !strings.Contains(pe.Message, "idle") || len(srv.Requests()) != 1 {
			t.Errorf("error %q after %d requests, want the idle watchdog named after 1", pe.Message, len(srv.Requests()))
		}
	})

	t.Run("SilentServerGetsOneMoreChance", func(t *testing.T) {
		// Not MaxRetries times the (long) idle timeout: one retry.
		silent := Delayed(time.Minute, Turn{Text: "too late"})
		srv := NewServer(t, silent, silent, Turn{Text: "unused"})
		p := build(t, srv, func(c *agent.ProviderConfig) { c.IdleTimeout = 100 * time.Millisecond })
		pe := Collect(t, p, UserRequest("x")).WantError(t, agent.ErrStream)
		if !strings.Contains(pe.Message, "no response") || len(srv.Requests()) != 2 {
			t.Errorf("error %q after %d requests, want no response named after 2", pe.Message, len(srv.Requests()))
		}
	})

	t.Run("SecretNotInErrors", func(t *testing.T) {
		// Servers that echo the credential back, in several places.
		echo := "Invalid key " + secretKey + " for this org; Authorization: Bearer " + secretKey
		srv := NewServer(t,
			Fail(401, echo, 0),
			StreamFail("", echo),
			Raw("data: {\"bad\": "+secretKey+"}\n\n"),
			Fail(400, strings.Repeat("x", 290)+secretKey, 0), // truncation must not leave a prefix
		)
		p := build(t, srv, func(c *agent.ProviderConfig) { c.MaxRetries = -1 })
		for i := range 4 {
			got := Collect(t, p, UserRequest("x"))
			if got.Final.Type != agent.ChunkError {
				t.Fatalf("step %d: want an error, got %+v", i, got.Final)
			}
			if msg := got.Final.Err.Error(); strings.Contains(msg, secretKey) || strings.Contains(msg, secretKey[:12]) {
				t.Errorf("step %d: error leaks the key: %q", i, msg)
			}
		}
		// An unreachable endpoint: the transport's error must not carry it either.
		unreachable := build(t, srv, func(c *agent.ProviderConfig) {
			c.BaseURL, c.MaxRetries = "http://127.0.0.1:1/v1", -1
		})
		got := Collect(t, unreachable, UserRequest("x"))
		got.WantError(t, agent.ErrTransient)
		if got.Final.Err != nil && strings.Contains(got.Final.Err.Error(), secretKey) {
			t.Errorf("error leaks the key: %v", got.Final.Err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		const n = 4
		turns := make([]Turn, n)
		for i := range turns {
			turns[i] = Respond(func(r Request) Turn {
				return Turn{Text: "re: " + r.Messages[0].Content, Usage: agent.Usage{Prompt: 1, Completion: 1}}
			})
		}
		srv := NewServer(t, turns...)
		p := build(t, srv, nil)
		var wg sync.WaitGroup
		got := make([]Streamed, n)
		for i := range n {
			wg.Go(func() { got[i] = Collect(t, p, UserRequest(strings.Repeat("q", i+1))) })
		}
		wg.Wait()
		for i, g := range got {
			if want := "re: " + strings.Repeat("q", i+1); g.Final.Type != agent.ChunkDone || g.Text != want {
				t.Errorf("stream %d: text %q final %+v, want %q", i, g.Text, g.Final, want)
			}
		}
	})

	t.Run("CancelMidStream", func(t *testing.T) {
		srv := NewServer(t, Stalled("working"))
		p := build(t, srv, nil)
		cancelled(t, p, nil)
	})

	t.Run("AlreadyCancelled", func(t *testing.T) {
		srv := NewServer(t, Turn{Text: "unused"})
		p := build(t, srv, nil)
		before := goleak.IgnoreCurrent()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ch, err := p.Stream(ctx, UserRequest("x"))
		if err == nil {
			last := drainWithin(t, ch, promptly)
			if last != nil && last.Type == agent.ChunkDone {
				t.Errorf("a stream started with a cancelled context reported success")
			}
		}
		closeIdle(p)
		if err := goleak.Find(before); err != nil {
			t.Errorf("goroutines left behind: %v", err)
		}
	})

	t.Run("CancelBeforeHeaders", func(t *testing.T) {
		arrived := make(chan struct{})
		srv := NewServer(t, Respond(func(Request) Turn {
			close(arrived)
			return Delayed(time.Minute, Turn{Text: "too late"})
		}))
		p := build(t, srv, nil)
		cancelled(t, p, arrived)
	})
}
