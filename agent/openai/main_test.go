package openai

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-SECRET-0123456789"

// sleepRecorder stands in for the retry sleep and remembers every wait.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// newTestProvider builds a provider whose retries do not really wait and
// whose jitter always picks the top of the range.
func newTestProvider(t testing.TB, cfg agent.ProviderConfig) (*Provider, *sleepRecorder) {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &sleepRecorder{}
	p.sleep = rec.sleep
	p.backoff.Rand = func(n int64) int64 { return n - 1 }
	t.Cleanup(p.CloseIdleConnections)
	return p, rec
}

// streamed is everything one Stream call produced.
type streamed struct {
	text   string
	pieces int
	calls  []agent.ToolCall
	usage  []agent.Usage
	final  agent.Chunk
}

// drain reads a stream to its end and checks the chunk-order contract:
// text, then calls, then at most one usage, then exactly one terminal chunk.
func drain(t testing.TB, ch <-chan agent.Chunk) streamed {
	t.Helper()
	var s streamed
	terminal := 0
	for c := range ch {
		if terminal > 0 {
			t.Fatalf("chunk %+v after the terminal chunk", c)
		}
		switch c.Type {
		case agent.ChunkText:
			if len(s.calls) > 0 || len(s.usage) > 0 {
				t.Fatalf("text after tool calls or usage")
			}
			s.text += c.Text
			s.pieces++
		case agent.ChunkToolCall:
			s.calls = append(s.calls, *c.ToolCall)
		case agent.ChunkUsage:
			s.usage = append(s.usage, c.Usage)
		case agent.ChunkDone, agent.ChunkError:
			terminal++
			s.final = c
		}
	}
	if terminal != 1 {
		t.Fatalf("stream ended with %d terminal chunks, want 1", terminal)
	}
	if len(s.usage) > 1 {
		t.Fatalf("got %d usage chunks, want at most 1", len(s.usage))
	}
	return s
}

func mustStream(t testing.TB, p *Provider, req agent.Request) streamed {
	t.Helper()
	ch, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return drain(t, ch)
}

func userRequest(text string) agent.Request {
	return agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: text}}}
}
