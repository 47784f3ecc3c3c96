package httpstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"reasonix/agent"
)

// errIdle is the cancellation cause the idle watchdog sets.
var errIdle = errors.New("httpstream: idle timeout")

// ErrStreamTooLarge is the read error a body past MaxStreamBytes gives; the
// readErr a decoder receives turns it into agent.ErrOutputTooLarge.
var ErrStreamTooLarge = errors.New("httpstream: response body too large")

// After a successful end the rest of the body is read, bounded in size and
// time, so the connection goes back to the pool for the next step; a
// server that keeps it open must not hold the stream.
const (
	drainLimit = 64 << 10
	drainWait  = time.Second
)

// attempt makes one HTTP request and decodes its response. The idle
// watchdog cancels the request when no byte arrives for c.Idle, whether
// waiting for headers or between events.
func (c *Client) attempt(ctx context.Context, r Request, body []byte, emit func(agent.Chunk) bool) outcome {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(c.Idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	idled := func() bool { return ctx.Err() == nil && errors.Is(context.Cause(reqCtx), errIdle) }

	httpReq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return failure(&agent.ProviderError{Class: agent.ErrRejected, Message: c.SafeMessage("building the request: " + err.Error())})
	}
	h := httpReq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if r.Header != nil {
		r.Header(h)
	}
	resp, err := c.HTTP.Do(httpReq)
	switch {
	case ctx.Err() != nil:
		if err == nil {
			resp.Body.Close()
		}
		return outcome{gone: true}
	case err != nil && idled():
		o := failure(c.StreamError(fmt.Sprintf("no response from the server within the idle timeout of %s", c.Idle)))
		o.silent = true
		return o
	case err != nil:
		return failure(&agent.ProviderError{Class: agent.ErrTransient, Message: c.SafeMessage("connection failed: " + err.Error())})
	}
	defer resp.Body.Close()

	if resp.StatusCode/100 != 2 {
		pe := c.httpFailure(r, resp)
		if ctx.Err() != nil {
			return outcome{gone: true}
		}
		return failure(pe)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// Some proxies and gateways answer a streaming request with 200 and
		// a JSON error.
		pe := c.httpFailure(r, resp)
		pe.Class, pe.Status, pe.RetryAfter = agent.ErrStream, 0, 0
		pe.Message = c.SafeMessage("the server answered with JSON instead of an event stream: " + pe.Message)
		return failure(pe)
	}

	readErr := func(err error) *agent.ProviderError {
		switch {
		case idled():
			return c.StreamError(fmt.Sprintf("the stream went idle: no data for %s", c.Idle))
		case errors.Is(err, ErrStreamTooLarge):
			return &agent.ProviderError{Class: agent.ErrOutputTooLarge,
				Message: c.SafeMessage(fmt.Sprintf("the response is larger than %d bytes (max_stream_bytes)", c.MaxStreamBytes))}
		}
		return c.StreamError("reading the stream: " + err.Error())
	}
	var src io.Reader = &idleReader{r: resp.Body, watchdog: watchdog, idle: c.Idle}
	if c.MaxStreamBytes > 0 {
		src = &boundedReader{r: src, left: c.MaxStreamBytes}
	}
	emitted := false
	final, ok := r.Decode(src, func(ch agent.Chunk) bool {
		emitted = true
		return emit(ch)
	}, readErr)
	if !ok || ctx.Err() != nil {
		return outcome{gone: true}
	}
	if final.Type == agent.ChunkDone {
		// Reading to EOF returns the connection to the pool for the next step.
		watchdog.Reset(drainWait)
		io.CopyN(io.Discard, resp.Body, drainLimit)
	}
	return outcome{final: final, emitted: emitted}
}

func failure(pe *agent.ProviderError) outcome {
	return outcome{final: agent.Chunk{Type: agent.ChunkError, Err: pe}}
}

// idleReader re-arms the watchdog whenever data arrives.
type idleReader struct {
	r        io.Reader
	watchdog *time.Timer
	idle     time.Duration
}

func (r *idleReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.watchdog.Reset(r.idle)
	}
	return n, err
}

// boundedReader stops reading a response body after left bytes. A runaway
// or hostile server may stream without end; the bytes read are decoded and
// dropped, but framing, keep-alive comments and usage reports would
// otherwise keep the connection (and the worker) forever. The caller closes
// the body, which drops the connection instead of draining it.
type boundedReader struct {
	r    io.Reader
	left int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrStreamTooLarge
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}
