package anthropic

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
var errIdle = errors.New("anthropic: idle timeout")

// After message_stop the rest of the body is read (bounded in size and
// time) so the connection goes back to the pool for the next step.
const (
	drainLimit = 64 << 10
	drainWait  = time.Second
)

// Stream sends req and streams the answer. It fails only when req cannot be
// encoded; everything else arrives on the channel: text as it is generated,
// then the complete tool calls in block order, then one usage chunk, then
// exactly one ChunkDone or ChunkError; then the channel is closed.
//
// Transient failures (connection errors, 408, 409, 5xx and 529, 429 with a
// retry-after of at most two minutes, an overloaded or cut stream, one
// silent wait for headers) are retried with jittered backoff while nothing
// has been passed on; after that a failure ends the stream, since part of
// the answer is already out.
//
// The consumer must read until the channel is closed or cancel ctx.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	body, err := p.encodeRequest(req)
	if err != nil {
		return nil, err
	}
	out := make(chan agent.Chunk, 16)
	go p.run(ctx, body, out)
	return out, nil
}

// run is the only sender on out and closes it.
func (p *Provider) run(ctx context.Context, body []byte, out chan<- agent.Chunk) {
	defer close(out)
	emit := func(c agent.Chunk) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	silentRetried := false
	for attempt := 0; ctx.Err() == nil; attempt++ {
		o := p.attempt(ctx, body, emit)
		if o.gone {
			break
		}
		if o.final.Type == agent.ChunkError && attempt < p.maxRetries {
			if delay, ok := p.retryDelay(o, attempt, &silentRetried); ok {
				agent.ReportRetry(ctx, fmt.Sprintf("%v; retrying in %s (retry %d of %d)",
					o.final.Err, delay.Round(time.Millisecond), attempt+1, p.maxRetries))
				if p.sleep(ctx, delay) != nil {
					break
				}
				continue
			}
		}
		emit(o.final)
		return
	}
	select { // best effort: the consumer may be gone already
	case out <- agent.Chunk{Type: agent.ChunkError, Err: fmt.Errorf("anthropic: %w", context.Cause(ctx))}:
	default:
	}
}

// outcome is how one HTTP attempt ended.
type outcome struct {
	final   agent.Chunk // ChunkDone or ChunkError
	emitted bool        // something reached the consumer: no retry
	silent  bool        // no response headers within the idle timeout
	gone    bool        // ctx ended or the consumer left; final is unset
}

// retryDelay says whether a failed attempt deserves another, and the wait.
func (p *Provider) retryDelay(o outcome, attempt int, silentRetried *bool) (time.Duration, bool) {
	var pe *agent.ProviderError
	if o.emitted || !errors.As(o.final.Err, &pe) {
		return 0, false
	}
	switch {
	case o.silent:
		// A server that does not answer at all gets one more chance, not
		// MaxRetries times the (long) idle timeout.
		if *silentRetried {
			return 0, false
		}
		*silentRetried = true
	case pe.RetryAfter > maxRetryAfter:
		return 0, false // too long to hold a worker: the caller may park the task
	case !errors.Is(pe, agent.ErrTransient):
		return 0, false // rejected, or too long for the window
	}
	// Stream failures count as transient (see agent.ProviderError.Is): tool
	// calls are passed on only complete, so a cut before any text loses nothing.
	return p.backoff.Delay(attempt, pe.RetryAfter), true
}

// attempt makes one HTTP request and decodes its response. The watchdog
// cancels the request when no byte arrives for p.idle, whether before the
// headers or between events.
func (p *Provider) attempt(ctx context.Context, body []byte, emit func(agent.Chunk) bool) outcome {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(p.idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	idled := func() bool { return ctx.Err() == nil && errors.Is(context.Cause(reqCtx), errIdle) }

	httpReq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		return failure(&agent.ProviderError{Class: agent.ErrRejected, Message: p.safeMessage("building the request: " + err.Error())})
	}
	h := httpReq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("Anthropic-Version", apiVersion)
	if p.key != "" {
		h.Set("X-Api-Key", p.key)
	}
	resp, err := p.client.Do(httpReq)
	switch {
	case ctx.Err() != nil:
		if err == nil {
			resp.Body.Close()
		}
		return outcome{gone: true}
	case err != nil && idled():
		o := failure(p.streamError(fmt.Sprintf("no response from the server within the idle timeout of %s", p.idle)))
		o.silent = true
		return o
	case err != nil:
		return failure(&agent.ProviderError{Class: agent.ErrTransient, Message: p.safeMessage("connection failed: " + err.Error())})
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		pe := p.httpFailure(resp)
		if ctx.Err() != nil {
			return outcome{gone: true}
		}
		return failure(pe)
	}

	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// Some gateways answer a streaming request with 200 and a JSON error.
		pe := p.httpFailure(resp)
		pe.Class, pe.Status = agent.ErrStream, 0
		pe.Message = p.safeMessage("the server answered with JSON instead of an event stream: " + pe.Message)
		return failure(pe)
	}

	emitted := false
	d := decoder{p: p, readErr: func(err error) *agent.ProviderError {
		if idled() {
			return p.streamError(fmt.Sprintf("the stream went idle: no data for %s", p.idle))
		}
		return p.streamError("reading the stream: " + err.Error())
	}}
	final, ok := d.decode(&idleReader{r: resp.Body, watchdog: watchdog, idle: p.idle}, func(c agent.Chunk) bool {
		emitted = true
		return emit(c)
	})
	if !ok || ctx.Err() != nil {
		return outcome{gone: true}
	}
	if final.Type == agent.ChunkDone {
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
