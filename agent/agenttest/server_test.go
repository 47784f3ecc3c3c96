package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/sse"
)

// post sends a minimal chat request with a client that is cleaned up.
func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const minimalBody = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

// events reads an SSE body into decoded chunks, stopping at [DONE].
func events(t *testing.T, body io.Reader) (chunks []chunk, done bool, err error) {
	t.Helper()
	rd := sse.NewReader(body, 0)
	for {
		ev, err := rd.Next()
		if err != nil {
			return chunks, false, err
		}
		if ev.Data == "[DONE]" {
			return chunks, true, nil
		}
		var c chunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			t.Fatalf("fake sent invalid JSON %q: %v", ev.Data, err)
		}
		chunks = append(chunks, c)
	}
}

func TestServerSplitsToolCallsAcrossChunks(t *testing.T) {
	calls := []agent.ToolCall{
		{ID: "call_one", Name: "read_file", Arguments: `{"path":"a"}`},
		{ID: "call_two", Name: "grep", Arguments: `{"pattern":"x"}`},
	}
	s := NewServer(t, Turn{Text: "hello there", ToolCalls: calls, Usage: agent.Usage{Prompt: 3, Completion: 2, Cached: 1}})
	resp := post(t, s.URL+"/chat/completions", minimalBody)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	chunks, done, err := events(t, resp.Body)
	if err != nil || !done {
		t.Fatalf("stream did not end with [DONE]: %v", err)
	}
	var text string
	idFrags := map[int]int{}
	got := map[int]*agent.ToolCall{}
	var order []int
	var finish string
	var usage *chunkUsage
	for _, c := range chunks {
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := *tc.Index
				if got[i] == nil {
					got[i] = &agent.ToolCall{}
				}
				order = append(order, i)
				if tc.ID != "" {
					idFrags[i]++
				}
				got[i].ID += tc.ID
				got[i].Name += tc.Function.Name
				got[i].Arguments += tc.Function.Arguments
			}
		}
	}
	if text != "hello there" || finish != "tool_calls" {
		t.Fatalf("text %q finish %q", text, finish)
	}
	for i, want := range calls {
		if *got[i] != want {
			t.Errorf("call %d reassembled as %+v, want %+v", i, *got[i], want)
		}
		if idFrags[i] < 2 {
			t.Errorf("call %d id was not split (%d fragments)", i, idFrags[i])
		}
	}
	interleaved := false
	for k := 1; k < len(order); k++ {
		if order[k] < order[k-1] {
			interleaved = true
		}
	}
	if !interleaved {
		t.Errorf("parallel calls were not interleaved: %v", order)
	}
	if usage == nil || usage.PromptTokens != 3 || usage.CompletionTokens != 2 || usage.Details.CachedTokens != 1 {
		t.Errorf("usage = %+v", usage)
	}
}

func TestServerRecordsRequests(t *testing.T) {
	var seen Request
	s := NewServer(t, Respond(func(r Request) Turn { seen = r; return Turn{Text: "reply to " + r.Messages[0].Content} }))
	before := time.Now()
	resp := post(t, s.URL+"/chat/completions", minimalBody)
	io.ReadAll(resp.Body)
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	r := reqs[0]
	if r.Step != 0 || r.Model != "m" || !r.Stream || !r.IncludeUsage || r.Authorization != "Bearer k" ||
		len(r.Messages) != 1 || r.Messages[0].Content != "hi" || r.Path != "/v1/chat/completions" {
		t.Fatalf("recorded %+v", r)
	}
	if r.Received.Before(before) || r.Responded.Before(r.Received) {
		t.Fatalf("times: received %v responded %v", r.Received, r.Responded)
	}
	if seen.Model != "m" || s.Remaining() != 0 {
		t.Fatalf("handler saw %+v; remaining %d", seen, s.Remaining())
	}
}

func TestServerFaults(t *testing.T) {
	s := NewServer(t, Fail(429, "slow down", 1500*time.Millisecond), ContextTooLong(), Raw("data: {nope\n\n"))

	resp := post(t, s.URL+"/chat/completions", minimalBody)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(body), `"message":"slow down"`) {
		t.Fatalf("429: status %d retry-after %q body %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp = post(t, s.URL+"/chat/completions", minimalBody)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":"context_length_exceeded"`) {
		t.Fatalf("context: status %d body %s", resp.StatusCode, body)
	}
	resp = post(t, s.URL+"/chat/completions", minimalBody)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "data: {nope\n\n" {
		t.Fatalf("raw: status %d body %q", resp.StatusCode, body)
	}
	// Exhausted: a 500 that says so, recorded with Step -1.
	resp = post(t, s.URL+"/chat/completions", minimalBody)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(body), "script exhausted") {
		t.Fatalf("exhausted: status %d body %s", resp.StatusCode, body)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[3].Step != -1 || reqs[3].Responded.IsZero() {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestServerRejectsBadRequests(t *testing.T) {
	s := NewServer(t, Turn{Text: "kept for a valid request"})
	if resp := post(t, s.URL+"/chat/completions", "not json"); resp.StatusCode != 400 {
		t.Fatalf("non-JSON body: status %d", resp.StatusCode)
	}
	if resp := post(t, s.URL+"/models", "{}"); resp.StatusCode != 404 {
		t.Fatalf("wrong path: status %d", resp.StatusCode)
	}
	if s.Remaining() != 1 {
		t.Fatalf("a bad request consumed a script step")
	}
}

func TestServerCutDropsConnection(t *testing.T) {
	s := NewServer(t, CutToolCall("about to write", agent.ToolCall{ID: "call_w", Name: "write_file", Arguments: `{"path":"x","content":"yyyyyyyy"}`}))
	resp := post(t, s.URL+"/chat/completions", minimalBody)
	chunks, done, err := events(t, resp.Body)
	if done || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut stream: done %v err %v, want unexpected EOF", done, err)
	}
	var args string
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				t.Fatalf("cut stream carried a finish reason")
			}
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
			}
		}
	}
	if args == `{"path":"x","content":"yyyyyyyy"}` {
		t.Fatalf("the whole call was sent before the cut")
	}
}

func TestServerCloseAbortsDelayedStep(t *testing.T) {
	arrived := make(chan struct{})
	s := StartServer([]Turn{Respond(func(Request) Turn {
		close(arrived)
		return Delayed(time.Hour, Turn{Text: "never"})
	})})
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(minimalBody))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-arrived
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on a delayed step")
	}
	<-errc
	http.DefaultClient.CloseIdleConnections()
	s.Close() // idempotent
}

func TestServerIdleGaps(t *testing.T) {
	s := NewServer(t, Turn{Text: "a"}, Turn{Text: "b"}, Turn{Text: "c"})
	for range 3 {
		resp := post(t, s.URL+"/chat/completions", minimalBody)
		io.ReadAll(resp.Body)
	}
	gaps := s.IdleGaps()
	reqs := s.Requests()
	if len(gaps) != 2 {
		t.Fatalf("gaps = %v", gaps)
	}
	for i, g := range gaps {
		if want := reqs[i+1].Received.Sub(reqs[i].Responded); g != max(want, 0) || g < 0 {
			t.Errorf("gap %d = %v, want %v", i, g, want)
		}
	}
}

func TestServerStallKeepsTheStreamOpen(t *testing.T) {
	s := NewServer(t, Stalled("still thinking"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", strings.NewReader(minimalBody))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, 0)
	var text string
	for text != "still thinking" {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("after %q: %v", text, err)
		}
		var c chunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			t.Fatalf("event %q: %v", ev.Data, err)
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				t.Fatalf("a stalled stream sent finish reason %q", *ch.FinishReason)
			}
			if ch.Delta.Content != nil {
				text += *ch.Delta.Content
			}
		}
	}
	// Nothing more comes until the client leaves.
	next := make(chan error, 1)
	go func() { _, err := rd.Next(); next <- err }()
	select {
	case err := <-next:
		t.Fatalf("the stalled stream went on: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-next; err == nil {
		t.Fatal("the stream read on after the client left")
	}
}
