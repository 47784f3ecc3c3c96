package openai

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
var errIdle = errors.New("openai: idle timeout")

// drainLimit and drainWait bound the tidy-up after [DONE]: reading the rest
// of the body lets the connection be reused, but a server that keeps it open
// must not hold the stream.
const (
	drainLimit = 64 << 10
	drainWait  = time.Second
)

// Stream sends req and streams the answer. It fails only when req cannot be
// encoded; everything else arrives on the channel, which carries text as it
// is generated, then the complete tool calls in index order, then one usage
// chunk, then exactly one ChunkDone or ChunkError, and is then closed. An
// answer without text or tool calls ends in a ChunkError of class
// agent.ErrEmptyAnswer, and one past the output bounds (MaxOutputBytes,
// MaxStreamBytes) in agent.ErrOutputTooLarge; reading stops there.
//
// Transient failures (connection errors, 408, 409, 5xx, 429 with a
// Retry-After of at most two minutes, a stream cut or garbled before any of
// it was passed on, one silent wait for response headers and one empty
// answer) are retried with jittered backoff before anything was sent on the
// channel. Failures after the response started are not retried: part of the
// answer may already have been passed on.
//
// The consumer must read until the channel is closed or cancel ctx. When
// ctx ends, the request is abandoned and the channel is closed, with a final
// ChunkError carrying ctx's error if the channel has room for it.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	body, err := p.encodeRequest(req)
	if err != nil {
		return nil, err
	}
	out := make(chan agent.Chunk, 16)
	go p.run(ctx, body, out)
	return out, nil
}

// run owns out: it is the only sender and closes it.
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
	var once retriedOnce
	for attempt := 0; ; attempt++ {
		res := p.attempt(ctx, body, emit)
		if res.gone || ctx.Err() != nil {
			break
		}
		if res.final.Type == agent.ChunkError && attempt < p.maxRetries {
			if delay, retry := p.retryDelay(res, attempt, &once); retry {
				agent.ReportRetry(ctx, fmt.Sprintf("%v; retrying in %s (retry %d of %d)",
					res.final.Err, delay.Round(time.Millisecond), attempt+1, p.maxRetries))
				if p.sleep(ctx, delay) != nil {
					break
				}
				continue
			}
		}
		emit(res.final)
		return
	}
	select { // best effort: the consumer may already be gone
	case out <- agent.Chunk{Type: agent.ChunkError, Err: fmt.Errorf("openai: %w", context.Cause(ctx))}:
	default:
	}
}

// result is how one HTTP attempt ended.
type result struct {
	final         agent.Chunk // ChunkDone or ChunkError
	emitted       bool        // something already reached the consumer
	preHeaderIdle bool        // the server sent no response headers in time
	gone          bool        // ctx ended or the consumer left; final is unset
}

// retriedOnce records the failures that get one more chance per request,
// not MaxRetries.
type retriedOnce struct {
	idle  bool // the server sent no response headers in time
	empty bool // the answer had no text and no tool call
}

// retryDelay decides whether a failed attempt is worth another one, and how
// long to wait first.
func (p *Provider) retryDelay(res result, attempt int, once *retriedOnce) (time.Duration, bool) {
	var pe *agent.ProviderError
	if res.emitted || !errors.As(res.final.Err, &pe) {
		return 0, false
	}
	switch {
	case res.preHeaderIdle && !once.idle:
		once.idle = true // a silent server gets one more chance, not MaxRetries
		return p.backoff.Delay(attempt, 0), true
	case pe.Class == agent.ErrEmptyAnswer && !once.empty:
		// Seen from overloaded servers that close a stream with [DONE] and
		// nothing else; asking again usually helps, asking often does not.
		once.empty = true
		return p.backoff.Delay(attempt, 0), true
	case pe.Class == agent.ErrRateLimited:
		if pe.RetryAfter > maxRetryAfter {
			return 0, false // too long to hold a worker: let the caller park the task
		}
		return p.backoff.Delay(attempt, pe.RetryAfter), true
	case pe.Class == agent.ErrTransient:
		return p.backoff.Delay(attempt, 0), true
	case pe.Class == agent.ErrStream && !res.preHeaderIdle:
		// Cut or garbled before anything reached the consumer (tool calls
		// are only passed on complete): asking again loses nothing.
		return p.backoff.Delay(attempt, 0), true
	}
	return 0, false
}

// attempt makes one HTTP request and decodes its response. The idle
// watchdog cancels the request when no byte arrives for p.idle, whether
// waiting for headers or between events.
func (p *Provider) attempt(ctx context.Context, body []byte, emit func(agent.Chunk) bool) result {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(p.idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	idled := func() bool { return errors.Is(context.Cause(reqCtx), errIdle) && ctx.Err() == nil }

	httpReq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		return failed(&agent.ProviderError{Class: agent.ErrRejected, Message: p.safeMessage("building the request: " + err.Error())})
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "text/event-stream")
	if p.key != "" {
		httpReq.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := p.client.Do(httpReq)
	switch {
	case ctx.Err() != nil:
		if err == nil {
			resp.Body.Close()
		}
		return result{gone: true}
	case err != nil && idled():
		res := failed(p.streamError(fmt.Sprintf("no response from the server within the idle timeout of %s", p.idle)))
		res.preHeaderIdle = true
		return res
	case err != nil:
		return failed(&agent.ProviderError{Class: agent.ErrTransient, Message: p.safeMessage("connection failed: " + err.Error())})
	}
	defer resp.Body.Close()

	if resp.StatusCode/100 != 2 {
		pe := p.httpFailure(resp)
		if ctx.Err() != nil {
			return result{gone: true}
		}
		return failed(pe)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// Some proxies answer a streaming request with a JSON error and 200.
		pe := p.httpFailure(resp)
		pe.Class, pe.Status = agent.ErrStream, 0
		pe.Message = p.safeMessage("the server answered with JSON instead of an event stream: " + pe.Message)
		return failed(pe)
	}

	emitted := false
	d := decoder{p: p, readErr: func(err error) *agent.ProviderError {
		if idled() {
			return p.streamError(fmt.Sprintf("the stream went idle: no data for %s", p.idle))
		}
		return p.streamError("reading the stream: " + err.Error())
	}}
	bounded := &boundedReader{r: &idleReader{r: resp.Body, watchdog: watchdog, idle: p.idle}, left: p.maxStream}
	final, ok := d.decode(bounded, func(c agent.Chunk) bool {
		emitted = true
		return emit(c)
	})
	if !ok || ctx.Err() != nil {
		return result{gone: true}
	}
	if final.Type == agent.ChunkDone {
		// Reading to EOF returns the connection to the pool for the next step.
		watchdog.Reset(drainWait)
		io.CopyN(io.Discard, resp.Body, drainLimit)
	}
	return result{final: final, emitted: emitted}
}

func failed(pe *agent.ProviderError) result {
	return result{final: agent.Chunk{Type: agent.ChunkError, Err: pe}}
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
