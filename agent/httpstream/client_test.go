package httpstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/backoff"
)

const testKey = "sk-transport-SECRET-42"

// lineDecoder is a minimal wire for the transport's tests: every line of
// the body is text, and a line "END" ends the answer.
func lineDecoder(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool) {
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if sc.Text() == "END" {
			return agent.Chunk{Type: agent.ChunkDone, FinishReason: "stop"}, true
		}
		if !emit(agent.Chunk{Type: agent.ChunkText, Text: sc.Text()}) {
			return agent.Chunk{}, false
		}
	}
	if err := sc.Err(); err != nil {
		return agent.Chunk{Type: agent.ChunkError, Err: readErr(err)}, true
	}
	return agent.Chunk{Type: agent.ChunkError, Err: &agent.ProviderError{Class: agent.ErrStream, Message: "cut"}}, true
}

// textFailure reads an error body as its message; 429 and 5xx are what
// they say, everything else is rejected.
func textFailure(status int, body []byte) (error, string) {
	switch {
	case status == 429:
		return agent.ErrRateLimited, string(body)
	case status >= 500:
		return agent.ErrTransient, string(body)
	}
	return agent.ErrRejected, string(body)
}

// reply is one scripted response.
type reply struct {
	status int
	header map[string]string
	body   string
}

// script serves replies in order and records request bodies and headers.
type script struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  []string
	headers []http.Header
}

func newScript(t *testing.T, replies ...reply) *script {
	s := &script{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.headers = append(s.headers, r.Header.Clone())
		rep := s.replies[min(len(s.bodies)-1, len(s.replies)-1)]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(cmpOr(rep.status, 200))
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func (s *script) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

// newClient returns a client of s whose retries record their waits instead
// of sleeping and whose jitter picks the top of its range.
func newClient(t *testing.T, s *script) (*Client, *[]time.Duration) {
	var waits []time.Duration
	c := &Client{
		Prefix: "test", URL: s.URL, Key: testKey, Idle: 5 * time.Second, MaxRetries: 3,
		HTTP: NewHTTPClient(),
		// The jitter source picks the top of its range: 500ms, 1s, 2s...
		Backoff: backoff.Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second, Rand: func(n int64) int64 { return n - 1 }},
		Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return ctx.Err()
		},
	}
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return c, &waits
}

func request(body string) Request {
	return Request{
		Body:    []byte(body),
		Header:  func(h http.Header) { h.Set("X-Test-Key", testKey) },
		Failure: textFailure,
		Decode:  lineDecoder,
	}
}

// collect reads a stream to its end.
func collect(t *testing.T, ch <-chan agent.Chunk) (text []string, final agent.Chunk) {
	t.Helper()
	for c := range ch {
		switch c.Type {
		case agent.ChunkText:
			text = append(text, c.Text)
		case agent.ChunkDone, agent.ChunkError:
			final = c
		}
	}
	return text, final
}

func providerError(t *testing.T, c agent.Chunk, class error) *agent.ProviderError {
	t.Helper()
	var pe *agent.ProviderError
	if c.Type != agent.ChunkError || !errors.As(c.Err, &pe) || !errors.Is(pe, class) {
		t.Fatalf("final %+v, want a provider error of class %v", c, class)
	}
	return pe
}

func TestSendsHeadersAndStreams(t *testing.T) {
	s := newScript(t, reply{body: "one\ntwo\nEND\n"})
	c, _ := newClient(t, s)
	text, final := collect(t, c.Stream(t.Context(), request(`{"q":1}`)))
	if final.Type != agent.ChunkDone || !slices.Equal(text, []string{"one", "two"}) {
		t.Fatalf("text %v final %+v", text, final)
	}
	h := s.headers[0]
	if h.Get("Content-Type") != "application/json" || h.Get("Accept") != "text/event-stream" || h.Get("X-Test-Key") != testKey {
		t.Errorf("headers %v", h)
	}
	if s.requests()[0] != `{"q":1}` {
		t.Errorf("body %q", s.requests()[0])
	}
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		requests int
		waits    []time.Duration
		class    error // nil: the last reply succeeds
	}{
		{"5xx then success", []reply{{status: 502, body: "bad gateway"}, {body: "ok\nEND\n"}}, 2, []time.Duration{500 * time.Millisecond}, nil},
		{"503 retry-after is a floor", []reply{{status: 503, header: map[string]string{"Retry-After": "4"}}, {body: "ok\nEND\n"}}, 2, []time.Duration{4 * time.Second}, nil},
		{"429 retry-after-ms", []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "1500"}}, {body: "ok\nEND\n"}}, 2, []time.Duration{1500 * time.Millisecond}, nil},
		{"long retry-after is returned", []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}}}, 1, nil, agent.ErrRateLimited},
		{"rejected is not retried", []reply{{status: 400, body: "bad"}}, 1, nil, agent.ErrRejected},
		{"cut before output is retried", []reply{{body: ""}, {body: "ok\nEND\n"}}, 2, []time.Duration{500 * time.Millisecond}, nil},
		{"cut after output is not", []reply{{body: "partial\n"}}, 1, nil, agent.ErrStream},
		{"retries stop at MaxRetries", []reply{{status: 500}}, 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, agent.ErrTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.replies...)
			c, waits := newClient(t, s)
			_, final := collect(t, c.Stream(t.Context(), request("{}")))
			if tt.class == nil && final.Type != agent.ChunkDone {
				t.Errorf("final %+v, want success", final)
			}
			if tt.class != nil {
				providerError(t, final, tt.class)
			}
			if n := len(s.requests()); n != tt.requests || !slices.Equal(*waits, tt.waits) {
				t.Errorf("%d requests, waits %v; want %d and %v", n, *waits, tt.requests, tt.waits)
			}
		})
	}
}

func TestEmptyAnswerGetsOneMoreChance(t *testing.T) {
	s := newScript(t, reply{body: "END\n"})
	c, waits := newClient(t, s)
	r := request("{}")
	r.Decode = func(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool) {
		io.Copy(io.Discard, body)
		return agent.Chunk{Type: agent.ChunkError, Err: &agent.ProviderError{Class: agent.ErrEmptyAnswer, Message: "nothing"}}, true
	}
	_, final := collect(t, c.Stream(t.Context(), r))
	providerError(t, final, agent.ErrEmptyAnswer)
	if len(s.requests()) != 2 || len(*waits) != 1 {
		t.Errorf("%d requests, waits %v; want one retry", len(s.requests()), *waits)
	}
}

func TestReviseSendsAnotherBodyWithoutCountingARetry(t *testing.T) {
	s := newScript(t, reply{status: 400, body: "feature unsupported"}, reply{body: "plain\nEND\n"})
	c, waits := newClient(t, s)
	c.MaxRetries = 0
	r := request(`{"feature":true}`)
	var seen []string
	r.Revise = func(pe *agent.ProviderError) ([]byte, bool) {
		seen = append(seen, pe.Message)
		if len(seen) > 1 {
			return nil, false
		}
		return []byte(`{"feature":false}`), true
	}
	text, final := collect(t, c.Stream(t.Context(), r))
	if final.Type != agent.ChunkDone || !slices.Equal(text, []string{"plain"}) {
		t.Fatalf("text %v final %+v", text, final)
	}
	if got := s.requests(); !slices.Equal(got, []string{`{"feature":true}`, `{"feature":false}`}) || len(*waits) != 0 {
		t.Errorf("bodies %v waits %v", got, *waits)
	}
	if !slices.Equal(seen, []string{"feature unsupported"}) {
		t.Errorf("Revise saw %v", seen)
	}
}

func TestErrorsAreTypedAndRedacted(t *testing.T) {
	s := newScript(t,
		reply{status: 401, body: "key " + testKey + " is wrong"},
		reply{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: "streaming is off for " + testKey},
		reply{status: 503, body: strings.Repeat("z", 1000)},
	)
	c, _ := newClient(t, s)
	c.MaxRetries = 0
	pe := providerError(t, lastOf(t, c, "{}"), agent.ErrRejected)
	if pe.Status != 401 || !strings.Contains(pe.Message, Redacted) || strings.Contains(pe.Error(), testKey) {
		t.Errorf("401: %v", pe)
	}
	pe = providerError(t, lastOf(t, c, "{}"), agent.ErrStream)
	if pe.Status != 0 || !strings.Contains(pe.Message, "JSON instead of an event stream") || strings.Contains(pe.Error(), testKey) {
		t.Errorf("JSON answer: %v", pe)
	}
	pe = providerError(t, lastOf(t, c, "{}"), agent.ErrTransient)
	if len([]rune(pe.Message)) > maxMessage+1 {
		t.Errorf("a %d-rune message was kept", len([]rune(pe.Message)))
	}
}

func lastOf(t *testing.T, c *Client, body string) agent.Chunk {
	t.Helper()
	_, final := collect(t, c.Stream(t.Context(), request(body)))
	return final
}

func TestMaxStreamBytesStopsARunawayBody(t *testing.T) {
	s := newScript(t, reply{body: strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 10000) + "\nEND\n"})
	c, _ := newClient(t, s)
	c.MaxStreamBytes = 4096
	text, final := collect(t, c.Stream(t.Context(), request("{}")))
	pe := providerError(t, final, agent.ErrOutputTooLarge)
	if !strings.Contains(pe.Message, "4096 bytes") || len(text) == 0 || text[0] != strings.Repeat("x", 100) {
		t.Errorf("message %q after text %d lines", pe.Message, len(text))
	}
}

func TestIdleWatchdog(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := &Client{Prefix: "test", URL: srv.URL, Idle: 80 * time.Millisecond, HTTP: NewHTTPClient(), Sleep: func(context.Context, time.Duration) error { return nil }}
	t.Cleanup(c.HTTP.CloseIdleConnections)
	start := time.Now()
	text, final := collect(t, c.Stream(t.Context(), request("{}")))
	pe := providerError(t, final, agent.ErrStream)
	if !strings.Contains(pe.Message, "idle") || !slices.Equal(text, []string{"first"}) || time.Since(start) > 5*time.Second {
		t.Errorf("message %q text %v after %v", pe.Message, text, time.Since(start))
	}
}

func TestCancelEndsWithTheCause(t *testing.T) {
	s := newScript(t, reply{status: 503})
	c, _ := newClient(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	_, final := collect(t, c.Stream(ctx, request("{}")))
	if final.Type != agent.ChunkError || !errors.Is(final.Err, context.Canceled) || !strings.HasPrefix(final.Err.Error(), "test: ") {
		t.Fatalf("final %+v", final)
	}
	if len(s.requests()) != 1 {
		t.Errorf("requested again after cancellation")
	}
}

func TestNewValidatesAndDefaults(t *testing.T) {
	c, err := New("x", agent.ProviderConfig{Model: "m", BaseURL: "https://h/v1/"}, "https://default", "/chat")
	if err != nil || c.URL != "https://h/v1/chat" {
		t.Fatalf("New = %+v, %v", c, err)
	}
	c.CloseIdleConnections()
	if c.Prefix != "x" || c.Idle != DefaultIdleTimeout || c.MaxRetries != DefaultMaxRetries || c.HTTP.Timeout != 0 ||
		c.MaxOutputBytes != DefaultMaxOutputBytes || c.MaxStreamBytes != DefaultMaxStreamBytes {
		t.Errorf("defaults: %+v", c)
	}
	if c, _ := New("x", agent.ProviderConfig{Model: "m", MaxRetries: -1}, "https://default", "/chat"); c.URL != "https://default/chat" || c.MaxRetries != 0 {
		t.Errorf("default base %q, retries %d", c.URL, c.MaxRetries)
	}
	if c, _ := New("x", agent.ProviderConfig{Model: "m", RequestURL: "http://exact/path"}, "https://default", "/chat"); c.URL != "http://exact/path" {
		t.Errorf("request_url: %q", c.URL)
	}
	for _, cfg := range []agent.ProviderConfig{
		{}, {Model: " "}, {Model: "m", BaseURL: "ftp://h"}, {Model: "m", RequestURL: "/relative"},
		{Model: "m", BaseURL: "https://u:hunter2@h x/"}, {Model: "m", APIKey: "sk-abc\n"},
		{Model: "m", IdleTimeout: -time.Second}, {Model: "m", MaxOutputBytes: -1}, {Model: "m", MaxStreamBytes: -1},
	} {
		_, err := New("x", cfg, "https://default", "/chat")
		if err == nil || !strings.HasPrefix(err.Error(), "x: ") || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "sk-abc") {
			t.Errorf("New(%+v) = %v", cfg, err)
		}
	}
}

func TestCountOutput(t *testing.T) {
	c := &Client{Key: testKey, MaxOutputBytes: 10}
	total := 0
	if pe := c.CountOutput(&total, 10); pe != nil || total != 10 {
		t.Fatalf("at the bound: %v, total %d", pe, total)
	}
	pe := c.CountOutput(&total, 1)
	if pe == nil || !errors.Is(pe, agent.ErrOutputTooLarge) || !strings.Contains(pe.Message, "10 bytes") || !strings.Contains(pe.Message, "max_output_bytes") {
		t.Fatalf("past the bound: %v", pe)
	}
	unbounded := &Client{}
	if pe := unbounded.CountOutput(&total, 1<<30); pe != nil {
		t.Errorf("no bound: %v", pe)
	}
}

// TestClientsShareConnections: the clients New builds — one per task in the
// service — share one HTTP client, so one task after another reuses the
// kept-alive connection instead of dialling (and TLS-handshaking) its own.
func TestClientsShareConnections(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "ok\nEND\n")
	}))
	var mu sync.Mutex
	dialled := 0
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			dialled++
			mu.Unlock()
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	var first *Client
	for i := range 5 {
		c, err := New("x", agent.ProviderConfig{Model: "m", BaseURL: s.URL}, "https://default", "/chat")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.CloseIdleConnections)
		if first == nil {
			first = c
		} else if c.HTTP != first.HTTP {
			t.Fatalf("client %d has its own HTTP client", i)
		}
		if _, final := collect(t, c.Stream(t.Context(), request(`{}`))); final.Type != agent.ChunkDone {
			t.Fatalf("request %d ended %+v", i, final)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if dialled != 1 {
		t.Errorf("5 clients dialled %d connections, want 1 shared", dialled)
	}
}
