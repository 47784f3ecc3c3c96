// Package lsp is the client side of the Language Server Protocol, as much
// of it as the lsp_* tools need: JSON-RPC 2.0 over a byte stream with
// Content-Length framing, requests and their answers, the server's own
// requests answered with empty results, and the diagnostics it publishes.
// The server is a program the task's workspace steers (gopls loads its
// go.mod), so everything read from it is bounded and checked.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// MaxMessage bounds one message from the server.
const MaxMessage = 32 << 20

// ErrClosed is returned by calls on a connection whose stream has ended.
var ErrClosed = errors.New("lsp: connection closed")

// Conn is one client connection to a language server. Its methods are
// safe for concurrent use.
type Conn struct {
	w   io.Writer
	wmu sync.Mutex

	mu      sync.Mutex
	next    int64
	pending map[int64]chan response
	diags   map[string]Published
	changed chan struct{} // closed and replaced when diagnostics arrive
	err     error         // why the read loop ended
	done    chan struct{} // closed when the read loop has ended
}

// Published is the last diagnostics a server published for a document.
type Published struct {
	Version     int // the document version they are for; 0 when the server did not say
	Seq         int // counts publications for the document
	Diagnostics []Diagnostic
}

type response struct {
	result json.RawMessage
	err    error
}

// message is every JSON-RPC message shape at once.
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// NewConn starts reading r (the server's output) and writes requests to w
// (its input). The connection ends when r does.
func NewConn(r io.Reader, w io.Writer) *Conn {
	c := &Conn{w: w, pending: map[int64]chan response{}, diags: map[string]Published{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(r, 64*1024))
	return c
}

// Done is closed when the server's output has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Call sends a request and decodes its result into result (which may be
// nil), waiting for the answer or ctx.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.next++
	id := c.next
	ch := make(chan response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result == nil || len(r.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("lsp: %s: unexpected result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		_ = c.Notify("$/cancelRequest", map[string]any{"id": id})
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Diagnostics returns the last diagnostics published for uri, and a
// channel closed when any document's diagnostics change next.
func (c *Conn) Diagnostics(uri string) (Published, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.diags[uri], c.changed
}

func (c *Conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Conn) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("lsp: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		return fmt.Errorf("lsp: writing to the server: %w", err)
	}
	return nil
}

func (c *Conn) readLoop(r *bufio.Reader) {
	var err error
	for {
		var body []byte
		if body, err = ReadMessage(r); err != nil {
			break
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue // not a message: skip it, the framing is intact
		}
		c.handle(m)
	}
	if errors.Is(err, io.EOF) {
		err = ErrClosed
	} else {
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

func (c *Conn) handle(m message) {
	switch {
	case m.Method != "" && m.ID != nil:
		// A request from the server (configuration, progress tokens,
		// capability registration): an empty answer lets it go on.
		var result any
		if m.Method == "workspace/configuration" {
			var p struct {
				Items []json.RawMessage `json:"items"`
			}
			_ = json.Unmarshal(m.Params, &p)
			result = make([]any, min(len(p.Items), 1000))
		}
		_ = c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	case m.Method == "textDocument/publishDiagnostics":
		var p struct {
			URI         string       `json:"uri"`
			Version     int          `json:"version"`
			Diagnostics []Diagnostic `json:"diagnostics"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.URI == "" {
			return
		}
		c.mu.Lock()
		prev := c.diags[p.URI]
		c.diags[p.URI] = Published{Version: p.Version, Seq: prev.Seq + 1, Diagnostics: p.Diagnostics}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	case m.Method == "" && m.ID != nil:
		id, err := strconv.ParseInt(string(*m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch == nil {
			return
		}
		r := response{result: m.Result}
		if m.Error != nil {
			r.err = fmt.Errorf("lsp: the server answered error %d: %s", m.Error.Code, bound(m.Error.Message, 500))
		}
		select {
		case ch <- r:
		default:
		}
	}
}

// ReadMessage reads one Content-Length framed message body from r.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	tp := textproto.NewReader(r)
	length := -1
	for n := 0; ; n++ {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		if line == "" {
			break
		}
		if n > 32 || len(line) > 1024 {
			return nil, errors.New("malformed header")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("malformed header line %q", bound(line, 80))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			length, err = strconv.Atoi(strings.TrimSpace(value))
			if err != nil || length < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", bound(value, 40))
			}
		}
	}
	if length < 0 {
		return nil, errors.New("message without Content-Length")
	}
	if length > MaxMessage {
		return nil, fmt.Errorf("message of %d bytes is over the %d-byte limit", length, MaxMessage)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
