package agenttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
)

// maxRequestBody bounds what the fake reads of one request.
const maxRequestBody = 64 << 20

// Server is a fake model endpoint on loopback speaking one provider kind's
// wire: OpenAI chat completions (NewServer), or, through NewServerFor, the
// Anthropic Messages API or the OpenAI Responses API. It answers POSTs to
// the kind's path with the next step of its script, in the real SSE wire
// format and with no think time, and records every request, decoded back
// into agent terms. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to configure a provider of the server's kind with:
	// ending in "/v1" for "openai" and "responses", the bare origin for
	// "anthropic" (whose client appends "/v1/messages").
	URL string

	wire      wireFormat
	srv       *httptest.Server
	done      chan struct{} // closed by Close: delayed steps stop waiting
	closeOnce sync.Once

	conns atomic.Int64 // connections accepted

	mu       sync.Mutex
	script   []Turn
	next     int
	requests []Request
}

// NewServer starts an OpenAI-compatible Server playing turns and closes it
// when the test ends.
func NewServer(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	return NewServerFor(t, "openai", turns...)
}

// NewServerFor starts a Server speaking the wire of provider kind ("openai",
// "anthropic" or "responses"; see Kinds) playing turns, and closes it when
// the test ends. An unknown kind fails the test.
func NewServerFor(t testing.TB, kind string, turns ...Turn) *Server {
	t.Helper()
	s, err := StartServerFor(kind, turns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartServer starts an OpenAI-compatible Server playing turns. The caller
// must Close it.
func StartServer(turns []Turn) *Server {
	s, _ := StartServerFor("openai", turns) // a known kind cannot fail
	return s
}

// StartServerFor starts a Server speaking the wire of kind playing turns.
// The caller must Close it.
func StartServerFor(kind string, turns []Turn) (*Server, error) {
	wire, ok := wires[kind]
	if !ok {
		return nil, fmt.Errorf("agenttest: no fake speaks the wire of provider kind %q (known: %v)", kind, Kinds())
	}
	s := &Server{wire: wire, done: make(chan struct{}), script: append([]Turn(nil), turns...)}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL + wire.basePath()
	return s, nil
}

// Kind is the provider kind whose wire the server speaks.
func (s *Server) Kind() string { return s.wire.kind() }

// Close stops the server, aborting delayed steps, and waits for outstanding
// requests to finish. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Remaining reports how many script steps have not been played yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Connections reports how many TCP connections the server has accepted;
// a client that keeps connections alive makes one per concurrent stream.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Requests returns a copy of the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// IdleGaps returns, for each request after the first, how long the server
// sat idle between completing the previous response and receiving this
// request: the client's own per-step overhead (tool runs included). Requests
// that overlapped count as 0; a response still in progress ends the list.
func (s *Server) IdleGaps() []time.Duration {
	reqs := s.Requests()
	var gaps []time.Duration
	for i := 1; i < len(reqs); i++ {
		prev := reqs[i-1].Responded
		if prev.IsZero() {
			break
		}
		gaps = append(gaps, max(reqs[i].Received.Sub(prev), 0))
	}
	return gaps
}

// ProviderConfig returns a configuration of the server's kind pointing at
// it, with model "fake-model" and key "test-key", for wiring a provider.
func (s *Server) ProviderConfig() agent.ProviderConfig {
	return agent.ProviderConfig{Name: "fake", Kind: s.wire.kind(), BaseURL: s.URL, Model: "fake-model", APIKey: "test-key"}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{Step: -1, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
		APIKey: s.wire.apiKey(r.Header), Received: time.Now()}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, s.wire.path()) {
		idx := s.record(rec)
		s.wire.writeError(w, http.StatusNotFound, 0, "agenttest: only POST ..."+s.wire.path()+" is served", "")
		s.responded(idx)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	rec.Body = body
	if why := s.wire.refuse(r.Header); err == nil && why != "" {
		err = errors.New(why)
	}
	if err == nil {
		err = s.wire.decode(body, &rec)
	}
	if err != nil {
		idx := s.record(rec)
		s.wire.writeError(w, http.StatusBadRequest, 0, err.Error(), "")
		s.responded(idx)
		return
	}

	s.mu.Lock()
	var turn Turn
	ok := s.next < len(s.script)
	if ok {
		turn, rec.Step = s.script[s.next], s.next
		s.next++
	}
	s.requests = append(s.requests, rec)
	idx, steps := len(s.requests)-1, len(s.script)
	s.mu.Unlock()
	defer s.responded(idx)

	if !ok {
		s.wire.writeError(w, http.StatusInternalServerError, 0,
			fmt.Sprintf("agenttest: script exhausted: all %d steps were already played", steps), "")
		return
	}
	if turn.Handler != nil {
		turn = turn.Handler(rec)
	}
	if turn.Delay > 0 {
		t := time.NewTimer(turn.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	s.play(w, r, turn, rec, idx)
}

// play writes one turn as the response to r, request number idx.
func (s *Server) play(w http.ResponseWriter, r *http.Request, turn Turn, rec Request, idx int) {
	switch {
	case turn.Status != 0:
		s.wire.writeError(w, turn.Status, turn.RetryAfter, turn.ErrorMessage, turn.ErrorCode)
		return
	case turn.Raw != "":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, turn.Raw)
		return
	}

	if rec.Model == "" {
		rec.Model = "fake-model"
	}
	events := s.wire.plan(turn, rec)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	var buf bytes.Buffer
	for _, ev := range events {
		buf.Reset()
		if ev.name != "" {
			buf.WriteString("event: ")
			buf.WriteString(ev.name)
			buf.WriteByte('\n')
		}
		buf.WriteString("data: ")
		buf.Write(ev.data)
		buf.WriteString("\n\n")
		w.Write(buf.Bytes())
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch {
	case turn.StreamError:
		// The wire's error event ended the plan.
	case turn.Garble:
		io.WriteString(w, "data: {\"garbled\": \n\n")
	case turn.Stall:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case turn.Cut:
		s.responded(idx)
		// Aborting the handler drops the connection without the final
		// chunk of the chunked encoding: the client sees a cut stream.
		panic(http.ErrAbortHandler)
	}
}

func (s *Server) record(rec Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	return len(s.requests) - 1
}

// responded stamps the completion time of request idx once.
func (s *Server) responded(idx int) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx >= 0 && idx < len(s.requests) && s.requests[idx].Responded.IsZero() {
		s.requests[idx].Responded = now
	}
}

// writeJSONError answers with status, a Retry-After header in whole seconds
// (rounded up) when retryAfter > 0, and body as JSON.
func writeJSONError(w http.ResponseWriter, status int, retryAfter time.Duration, body any) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
