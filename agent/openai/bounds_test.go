package openai

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/agent/httpstream"
)

func TestOnlyDoneIsEmptyAnswerRetriedOnce(t *testing.T) {
	done := agenttest.Raw("data: [DONE]\n\n")
	srv := agenttest.NewServer(t, done, done, done)
	p, sleeps := newTestProvider(t, srv.ProviderConfig())
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrEmptyAnswer)
	if !strings.Contains(pe.Message, "no text and no tool call") {
		t.Errorf("message %q does not say the answer was empty", pe.Message)
	}
	if n := len(srv.Requests()); n != 2 || len(sleeps.Waits()) != 1 {
		t.Errorf("requests = %d, sleeps = %d; want one retry of an empty answer", n, len(sleeps.Waits()))
	}
	if agent.Reason(pe) != "provider.empty_answer" {
		t.Errorf("reason = %q", agent.Reason(pe))
	}
}

func TestEmptyAnswerThenARealOne(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Raw("data: [DONE]\n\n"), agenttest.Turn{Text: "here it is"})
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || got.Text != "here it is" {
		t.Fatalf("got %+v", got)
	}
}

func TestFinishWithoutTextOrCallsIsEmptyAnswer(t *testing.T) {
	empty := agenttest.Raw(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":"  \n"},"finish_reason":"length"}]}` + "\n\n")
	srv := agenttest.NewServer(t, empty, empty)
	p, _ := newTestProvider(t, srv.ProviderConfig())
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrEmptyAnswer)
	if !strings.Contains(pe.Message, `"length"`) {
		t.Errorf("message %q does not name the finish reason", pe.Message)
	}
}

func TestAnswerPastMaxOutputBytes(t *testing.T) {
	for name, turn := range map[string]agenttest.Turn{
		"text": {Text: strings.Repeat("a", 5000)},
		"tool call": {ToolCalls: []agent.ToolCall{{ID: "c1", Name: "write_file",
			Arguments: fmt.Sprintf(`{"path":"f","content":%q}`, strings.Repeat("b", 5000))}}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := agenttest.NewServer(t, turn, turn)
			cfg := srv.ProviderConfig()
			cfg.MaxOutputBytes = 4096
			p, _ := newTestProvider(t, cfg)
			got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
			pe := got.WantError(t, agent.ErrOutputTooLarge)
			if !strings.Contains(pe.Message, "max_output_bytes") || len(got.Calls) != 0 || len(got.Text) > 4096 {
				t.Errorf("message %q, %d calls, %d bytes of text passed on", pe.Message, len(got.Calls), len(got.Text))
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("requests = %d: a too large answer is not asked for again", n)
			}
		})
	}
}

// hugeServer streams up to total bytes of text deltas (or, with comments,
// of keep-alive comments that carry no text at all) and counts what it
// managed to write before the client hung up. The channel is closed when the
// first answer's handler has returned: it wrote all, or a write failed.
func hugeServer(t testing.TB, total int64, comments bool) (*httptest.Server, *atomic.Int64, <-chan struct{}) {
	var written atomic.Int64
	ended := make(chan struct{})
	var once sync.Once
	piece := fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", strings.Repeat("x", 8<<10))
	if comments {
		piece = ": " + strings.Repeat("k", 8<<10) + "\n"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer once.Do(func() { close(ended) })
		w.Header().Set("Content-Type", "text/event-stream")
		for written.Load() < total {
			n, err := w.Write([]byte(piece))
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &written, ended
}

// TestHundredMegabyteAnswerStopsEarly: a server that streams 100 MB gets
// an output error after the first few megabytes, and the client stops
// reading (the server's writes fail long before 100 MB): text trips the
// default max_output_bytes, keep-alive comments that carry no text a
// max_stream_bytes of 4 MiB.
func TestHundredMegabyteAnswerStopsEarly(t *testing.T) {
	const total = 100 << 20
	for name, comments := range map[string]bool{"text": false, "comments": true} {
		t.Run(name, func(t *testing.T) {
			srv, written, ended := hugeServer(t, total, comments)
			cfg := agent.ProviderConfig{BaseURL: srv.URL}
			if comments {
				cfg.MaxStreamBytes = 4 << 20
			}
			p, _ := newTestProvider(t, cfg)
			got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
			pe := got.WantError(t, agent.ErrOutputTooLarge)
			if len(got.Text) > httpstream.DefaultMaxOutputBytes {
				t.Errorf("%d bytes of text passed on, more than the bound %d", len(got.Text), httpstream.DefaultMaxOutputBytes)
			}
			// The server notices the closed connection once the socket
			// buffers are full: a few megabytes past the bound at most. Had
			// the client kept reading, the handler would end after writing
			// all of it.
			select {
			case <-ended:
			case <-time.After(30 * time.Second):
				t.Fatalf("the server still writes after %d bytes: the client neither reads on nor hangs up", written.Load())
			}
			if n := written.Load(); n >= total/4 {
				t.Errorf("the server wrote %d bytes: the client kept reading past the bound (%v)", n, pe)
			}
			srv.CloseClientConnections()
		})
	}
}

// BenchmarkHundredMegabyteAnswer measures the peak heap growth while a
// server streams a 100 MB answer and the consumer keeps the text, as the
// harness does. Run: go test ./agent/openai/ -run X -bench HundredMegabyte
func BenchmarkHundredMegabyteAnswer(b *testing.B) {
	srv, _, _ := hugeServer(b, 100<<20, false)
	p, _ := newTestProvider(b, agent.ProviderConfig{BaseURL: srv.URL})
	var peak uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() {
			var top uint64
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapAlloc)
				select {
				case <-stop:
					sampled <- top
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		ch, err := p.Stream(b.Context(), agenttest.UserRequest("x"))
		if err != nil {
			b.Fatal(err)
		}
		var text strings.Builder
		for c := range ch {
			text.WriteString(c.Text)
		}
		close(stop)
		top := <-sampled
		if top > before.HeapAlloc {
			peak = max(peak, top-before.HeapAlloc)
		}
		srv.CloseClientConnections()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// TestLongAnswerWithRealFramingFits: the default bounds leave room for a
// long answer as real servers frame it, a few characters per delta under
// ~230 bytes of repeated JSON: 20,000 deltas of 4 bytes (80 KB of text in
// ~4.6 MB of body, more than a bound of 4 MiB would allow) arrive whole.
func TestLongAnswerWithRealFramingFits(t *testing.T) {
	delta := `data: {"id":"chatcmpl-9xYzAbCdEfGhIjKlMnOpQrStUv","object":"chat.completion.chunk","created":1732999999,` +
		`"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_0123456789","choices":[{"index":0,"delta":{"content":"abcd"},` +
		`"logprobs":null,"finish_reason":null}]}` + "\n\n"
	body := strings.Repeat(delta, 20000) + "data: [DONE]\n\n"
	srv := agenttest.NewServer(t, agenttest.Raw(body))
	p, _ := newTestProvider(t, srv.ProviderConfig())
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	if got.Final.Type != agent.ChunkDone || len(got.Text) != 80000 {
		t.Fatalf("final %+v, %d bytes of text; want the whole answer", got.Final, len(got.Text))
	}
}
