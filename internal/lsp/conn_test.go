package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeServer answers on the other end of two pipes, driven by the test.
type fakeServer struct {
	r *bufio.Reader
	w io.Writer
}

func (s fakeServer) read(t *testing.T) message {
	t.Helper()
	body, err := ReadMessage(s.r)
	if err != nil {
		t.Fatalf("server read: %v", err)
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (s fakeServer) write(t *testing.T, v string) {
	t.Helper()
	if _, err := fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n%s", len(v), v); err != nil {
		t.Fatal(err)
	}
}

func pair(t *testing.T) (*Conn, fakeServer) {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	c := NewConn(cr, cw)
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		<-c.Done()
	})
	return c, fakeServer{bufio.NewReader(sr), sw}
}

func TestCallGetsItsAnswerWhileTheServerAsksAndPublishes(t *testing.T) {
	c, s := pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		locs []Location
		err  error
	}
	got := make(chan result, 1)
	go func() {
		var raw json.RawMessage
		err := c.Call(ctx, "textDocument/definition", map[string]any{"x": 1}, &raw)
		got <- result{Locations(raw), err}
	}()
	req := s.read(t)
	if req.Method != "textDocument/definition" || req.ID == nil {
		t.Fatalf("request = %+v", req)
	}
	// Before answering, the server asks for configuration and publishes.
	s.write(t, `{"jsonrpc":"2.0","id":"cfg","method":"workspace/configuration","params":{"items":[{},{}]}}`)
	if ans := s.read(t); string(*ans.ID) != `"cfg"` || string(ans.Result) != `[null,null]` {
		t.Errorf("answer to the server's request = id %s result %s", *ans.ID, ans.Result)
	}
	_, changed := c.Diagnostics("file:///a.go")
	s.write(t, `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///a.go","version":3,"diagnostics":[{"range":{"start":{"line":1,"character":2}},"severity":1,"message":"undefined: x"}]}}`)
	<-changed
	if p, _ := c.Diagnostics("file:///a.go"); p.Version != 3 || p.Seq != 1 || len(p.Diagnostics) != 1 || p.Diagnostics[0].Message != "undefined: x" {
		t.Errorf("published = %+v", p)
	}
	s.write(t, `not json at all`)
	s.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":[{"targetUri":"file:///b.go","targetSelectionRange":{"start":{"line":4,"character":5}}}]}`, *req.ID))
	r := <-got
	if r.err != nil || len(r.locs) != 1 || r.locs[0].URI != "file:///b.go" || r.locs[0].Range.Start.Line != 4 {
		t.Fatalf("Call = %+v", r)
	}
}

func TestCallReportsServerErrorsAndTheEnd(t *testing.T) {
	c, s := pair(t)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "x", nil, nil) }()
	req := s.read(t)
	s.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, *req.ID))
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "no such method") {
		t.Errorf("server error = %v", err)
	}
	go func() { errc <- c.Call(ctx, "y", nil, nil) }()
	s.read(t)
	s.w.(*io.PipeWriter).Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("call across the end = %v", err)
	}
	if err := c.Call(ctx, "z", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after the end = %v", err)
	}
}

func TestHoverAndLocationShapes(t *testing.T) {
	for raw, want := range map[string]string{
		`{"contents":{"kind":"markdown","value":"func F()"}}`: "func F()",
		`{"contents":"plain"}`:                                "plain",
		`{"contents":[{"language":"go","value":"a"},"b"]}`:    "a\n\nb",
		`null`:           "",
		`{"contents":7}`: "",
	} {
		if got := HoverText(json.RawMessage(raw)); got != want {
			t.Errorf("HoverText(%s) = %q, want %q", raw, got, want)
		}
	}
	if l := Locations(json.RawMessage(`{"uri":"file:///a","range":{}}`)); len(l) != 1 {
		t.Errorf("one location: %v", l)
	}
	if l := Locations(json.RawMessage(`null`)); len(l) != 0 {
		t.Errorf("null: %v", l)
	}
}

// FuzzReadMessage: the frame reader never panics, never returns a body
// over MaxMessage, and a body it returns has the length its header said.
func FuzzReadMessage(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}", "Content-Length: -1\r\n\r\n", "Content-Length: 99999999999\r\n\r\n",
		"content-length:3\r\nContent-Type: x\r\n\r\nabc", "\r\n", "Content-Length: 5\r\n\r\nab", "no colon\r\n\r\n",
		strings.Repeat("X: y\r\n", 40) + "\r\n", "Content-Length: 1\n\nx",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ReadMessage(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		if len(body) > MaxMessage || !bytes.Contains(data, body) {
			t.Fatalf("body of %d bytes from %q", len(body), data)
		}
		_ = Locations(body)
		_ = HoverText(body)
	})
}
