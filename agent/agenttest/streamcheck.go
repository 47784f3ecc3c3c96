package agenttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

// The stream readers TestProvider checks every response with.

// cancelled starts a stream that would never end, cancels it once the
// server has the request (when arrived closes) or, with arrived nil, after
// the first chunk, and checks that the channel closes promptly, reports no
// success, and leaves no goroutine behind.
func cancelled(t *testing.T, p agent.Provider, arrived <-chan struct{}) {
	t.Helper()
	// Goroutines of earlier subtests (kept-alive connections, the fake
	// server) may still be winding down; only new ones count.
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := p.Stream(ctx, userRequest("x"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if arrived == nil {
		select {
		case c := <-ch:
			if c.Type != agent.ChunkText {
				t.Fatalf("first chunk = %+v, want the text the server sent", c)
			}
		case <-time.After(promptly):
			t.Fatal("no first chunk")
		}
	} else {
		select {
		case <-arrived:
		case <-time.After(promptly):
			t.Fatal("the request did not reach the server")
		}
	}
	cancel()
	last := drainWithin(t, ch, promptly)
	if last != nil && last.Type == agent.ChunkDone {
		t.Errorf("a cancelled stream reported success")
	}
	if last != nil && last.Type == agent.ChunkError && !errors.Is(last.Err, context.Canceled) {
		t.Errorf("final error after cancel = %v, want one wrapping context.Canceled", last.Err)
	}
	closeIdle(p)
	if err := goleak.Find(before); err != nil {
		t.Errorf("goroutines left behind by a cancelled stream: %v", err)
	}
}

// drainWithin reads ch until it closes and returns the last chunk (nil when
// there was none); the channel must close within d.
func drainWithin(t *testing.T, ch <-chan agent.Chunk, d time.Duration) *agent.Chunk {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var last *agent.Chunk
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				return last
			}
			last = &c
		case <-timer.C:
			t.Fatalf("the channel was still open %v after cancellation", d)
		}
	}
}

// closeIdle drops the kept-alive connections of providers that pool them,
// whose goroutines would otherwise look leaked.
func closeIdle(p agent.Provider) {
	if c, ok := p.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// streamed is everything one Stream call produced.
type streamed struct {
	text   string
	pieces int
	calls  []agent.ToolCall
	usage  []agent.Usage
	final  agent.Chunk
}

// stream runs one request to its end and checks the chunk-order contract:
// text, then calls, then at most one usage, then exactly one terminal chunk
// and a closed channel. An error from Stream itself (the request could not
// be started) is returned as the final error chunk, so the failure checks
// apply to it alike. Safe to call from several goroutines.
func stream(t *testing.T, p agent.Provider, req agent.Request) streamed {
	var s streamed
	ch, err := p.Stream(t.Context(), req)
	if err != nil {
		s.final = agent.Chunk{Type: agent.ChunkError, Err: err}
		return s
	}
	timer := time.NewTimer(callTimeout)
	defer timer.Stop()
	terminal := 0
	for {
		var c agent.Chunk
		var ok bool
		select {
		case c, ok = <-ch:
		case <-timer.C:
			t.Errorf("the stream did not end within %v", callTimeout)
			return s
		}
		if !ok {
			break
		}
		if terminal > 0 {
			t.Errorf("chunk %+v after the terminal chunk", c)
		}
		switch c.Type {
		case agent.ChunkText:
			if len(s.calls) > 0 || len(s.usage) > 0 {
				t.Errorf("text %q after tool calls or usage", c.Text)
			}
			s.text += c.Text
			s.pieces++
		case agent.ChunkToolCall:
			if c.ToolCall == nil {
				t.Errorf("a tool call chunk without a call")
				continue
			}
			if len(s.usage) > 0 {
				t.Errorf("tool call after usage")
			}
			s.calls = append(s.calls, *c.ToolCall)
		case agent.ChunkUsage:
			s.usage = append(s.usage, c.Usage)
		case agent.ChunkDone, agent.ChunkError:
			terminal++
			s.final = c
		default:
			t.Errorf("chunk of unknown type %d", c.Type)
		}
	}
	if terminal != 1 {
		t.Errorf("the stream ended with %d terminal chunks, want 1", terminal)
	}
	if len(s.usage) > 1 {
		t.Errorf("got %d usage chunks, want at most 1", len(s.usage))
	}
	return s
}

// wantDone checks that the stream succeeded with finish reason.
func (s streamed) wantDone(t *testing.T, finish string) {
	t.Helper()
	if s.final.Type != agent.ChunkDone {
		t.Fatalf("final = %+v (error %v), want success", s.final, s.final.Err)
	}
	if s.final.FinishReason != finish {
		t.Errorf("finish reason = %q, want %q", s.final.FinishReason, finish)
	}
}

// wantError checks that the stream failed with a *agent.ProviderError of
// class and returns it (nil after reporting that it is not one).
func (s streamed) wantError(t *testing.T, class error) *agent.ProviderError {
	t.Helper()
	if s.final.Type != agent.ChunkError {
		t.Errorf("final = %+v, want an error of class %v", s.final, class)
		return nil
	}
	var pe *agent.ProviderError
	if !errors.As(s.final.Err, &pe) {
		t.Errorf("error %v is a %T, want a *agent.ProviderError", s.final.Err, s.final.Err)
		return nil
	}
	if !errors.Is(pe, class) {
		t.Errorf("error %v has class %v, want %v", pe, pe.Class, class)
	}
	return pe
}

func userRequest(text string) agent.Request {
	return agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: text}}}
}
