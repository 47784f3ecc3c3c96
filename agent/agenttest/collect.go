package agenttest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
)

// Streamed is everything one Stream call produced.
type Streamed struct {
	Text   string
	Pieces int // how many ChunkText the text came in
	// Thinking is the ChunkThinking text, which must come first.
	Thinking string
	Calls    []agent.ToolCall
	Usage    []agent.Usage
	Final    agent.Chunk // the ChunkDone or ChunkError
}

// Collect runs req on p to its end; see Drain. An error from Stream itself
// (the request could not be started) is returned as the final error chunk,
// so the failure checks apply to it alike.
func Collect(t testing.TB, p agent.Provider, req agent.Request) Streamed {
	ch, err := p.Stream(t.Context(), req)
	if err != nil {
		return Streamed{Final: agent.Chunk{Type: agent.ChunkError, Err: err}}
	}
	return Drain(t, ch)
}

// Drain reads ch until it closes and checks the chunk-order contract: text,
// then calls, then at most one usage, then exactly one terminal chunk and a
// closed channel, within callTimeout. It reports with t.Errorf, so it is
// safe to call from several goroutines.
func Drain(t testing.TB, ch <-chan agent.Chunk) Streamed {
	var s Streamed
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
		case agent.ChunkThinking:
			if s.Text != "" || len(s.Calls) > 0 || len(s.Usage) > 0 {
				t.Errorf("thinking %q after text, tool calls or usage", c.Text)
			}
			s.Thinking += c.Text
		case agent.ChunkText:
			if len(s.Calls) > 0 || len(s.Usage) > 0 {
				t.Errorf("text %q after tool calls or usage", c.Text)
			}
			s.Text += c.Text
			s.Pieces++
		case agent.ChunkToolCall:
			if c.ToolCall == nil {
				t.Errorf("a tool call chunk without a call")
				continue
			}
			if len(s.Usage) > 0 {
				t.Errorf("tool call after usage")
			}
			s.Calls = append(s.Calls, *c.ToolCall)
		case agent.ChunkUsage:
			s.Usage = append(s.Usage, c.Usage)
		case agent.ChunkDone, agent.ChunkError:
			terminal++
			s.Final = c
		default:
			t.Errorf("chunk of unknown type %d", c.Type)
		}
	}
	if terminal != 1 {
		t.Errorf("the stream ended with %d terminal chunks, want 1", terminal)
	}
	if len(s.Usage) > 1 {
		t.Errorf("got %d usage chunks, want at most 1", len(s.Usage))
	}
	return s
}

// WantDone checks that the stream succeeded with finish reason.
func (s Streamed) WantDone(t testing.TB, finish string) {
	t.Helper()
	if s.Final.Type != agent.ChunkDone {
		t.Fatalf("final = %+v (error %v), want success", s.Final, s.Final.Err)
	}
	if s.Final.FinishReason != finish {
		t.Errorf("finish reason = %q, want %q", s.Final.FinishReason, finish)
	}
}

// WantError checks that the stream failed with a *agent.ProviderError of
// class and returns it; anything else ends the test.
func (s Streamed) WantError(t testing.TB, class error) *agent.ProviderError {
	t.Helper()
	var pe *agent.ProviderError
	if s.Final.Type != agent.ChunkError || !errors.As(s.Final.Err, &pe) {
		t.Fatalf("final = %+v (error %T), want a *agent.ProviderError of class %v", s.Final, s.Final.Err, class)
	}
	if !errors.Is(pe, class) {
		t.Fatalf("error %v has class %v, want %v", pe, pe.Class, class)
	}
	return pe
}

// UserRequest is a request of one user message.
func UserRequest(text string) agent.Request {
	return agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: text}}}
}

// Build makes a provider with mk from cfg, ending the test when that
// fails, and closes its idle connections (when it has the method) as t
// ends, so leak checks see none.
func Build[P agent.Provider](t testing.TB, mk func(agent.ProviderConfig) (P, error), cfg agent.ProviderConfig) P {
	t.Helper()
	p, err := mk(cfg)
	if err != nil {
		t.Fatalf("building a provider: %v", err)
	}
	t.Cleanup(func() { closeIdle(p) })
	return p
}

// Sleeps stands in for the wait between retries (an HTTP provider's Sleep
// seam): it returns at once and remembers every delay asked for.
type Sleeps struct {
	mu     sync.Mutex
	delays []time.Duration
}

// Sleep records d and returns ctx's error.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the delays recorded so far.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.delays)
}

// TopJitter is a jitter source (a backoff policy's Rand) that always picks
// the top of its range, so a test knows every delay in advance.
func TopJitter(n int64) int64 { return n - 1 }
