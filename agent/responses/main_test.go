package responses

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-proj-test-SECRET-0123456789"

// reply is one scripted HTTP response of the fake Responses API.
type reply struct {
	status int
	header map[string]string
	body   string
}

// recorded is a 200 event-stream reply with the body of testdata/name.
func recorded(t testing.TB, name string) reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: string(b)}
}

// apiFailure is an error reply in OpenAI's JSON envelope.
func apiFailure(status int, typ, code, msg string, header map[string]string) reply {
	if code == "" {
		code = "null"
	} else {
		code = `"` + code + `"`
	}
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	return reply{status: status, header: h,
		body: `{"error":{"message":"` + msg + `","type":"` + typ + `","param":null,"code":` + code + `}}`}
}

// fakeAPI serves scripted replies in order and records what it was sent.
// Event-stream bodies are written one event at a time with a flush, as the
// real API streams them. Once the script runs out, it repeats the last reply.
type fakeAPI struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	served  int
	bodies  []string
	headers []http.Header
}

func newFakeAPI(t testing.TB, replies ...reply) *fakeAPI {
	f := &fakeAPI{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.headers = append(f.headers, r.Header.Clone())
	rep := f.replies[min(f.served, len(f.replies)-1)]
	f.served++
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	flusher, _ := w.(http.Flusher)
	for _, ev := range strings.SplitAfter(rep.body, "\n\n") {
		io.WriteString(w, ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func (f *fakeAPI) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeAPI) config() agent.ProviderConfig {
	return agent.ProviderConfig{Name: "oai", Kind: Kind, BaseURL: f.URL, Model: "gpt-4.1", APIKey: testKey}
}

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
// whose jitter always picks the top of its range.
func newTestProvider(t testing.TB, cfg agent.ProviderConfig) (*Provider, *sleepRecorder) {
	t.Helper()
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

// drain reads a stream to its end and checks the order the contract
// promises: text, tool calls, at most one usage, exactly one terminal chunk.
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
	if terminal != 1 || len(s.usage) > 1 {
		t.Fatalf("stream ended with %d terminal and %d usage chunks", terminal, len(s.usage))
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
