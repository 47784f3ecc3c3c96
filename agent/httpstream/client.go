// Package httpstream is the HTTP side every streaming model client shares:
// it POSTs a request with the wire's headers, retries transient failures
// with jittered backoff that never undercuts the server's retry-after,
// turns error responses into typed *agent.ProviderError values, guards
// every wait with an idle watchdog instead of a whole-request timeout, and
// keeps the API key out of every message it builds. New builds a Client
// from a provider's configuration, validating and defaulting the settings
// every HTTP provider kind shares.
//
// A provider package keeps only its wire format: it encodes the request
// body, says how to read an error body, and decodes the event stream of a
// successful response (Request), counting the answer's bytes with
// CountOutput. Everything between the two is here, once.
package httpstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"reasonix/agent"
	"reasonix/internal/backoff"
)

// MaxRetryAfter is the longest server-requested wait Stream sits out
// itself. A longer one is returned as the error, so the caller can park the
// task instead of holding a worker.
const MaxRetryAfter = 2 * time.Minute

// Client is one provider's endpoint and retry settings; New builds it from
// a provider's configuration. It holds no state between calls and serves
// concurrent ones. Its fields may be changed before the first Stream (tests
// replace the Backoff, Sleep and Now seams), not during one.
type Client struct {
	// Prefix starts every error message ("openai"), naming the provider kind.
	Prefix string
	// URL is the exact request URL.
	URL string
	// Key is the API key; it is removed from every message the client builds.
	Key string
	// Idle bounds every wait: for response headers and between stream bytes.
	Idle time.Duration
	// MaxRetries bounds the retries of one request; 0 means none.
	MaxRetries int
	// MaxOutputBytes bounds one answer's text and tool calls, as the wire's
	// decoder counts them with CountOutput; 0 means no bound.
	MaxOutputBytes int
	// MaxStreamBytes bounds the response body of one attempt; 0 means no bound.
	MaxStreamBytes int
	// HTTP sends the requests. It should have no Timeout: an answer may
	// legitimately stream for many minutes; Idle bounds the waits instead.
	HTTP *http.Client
	// Backoff draws retry delays; Sleep waits them out (backoff.Sleep when
	// nil); Now is the clock for HTTP-date retry-after values (time.Now
	// when nil). The last two are seams for tests.
	Backoff backoff.Policy
	Sleep   func(ctx context.Context, d time.Duration) error
	Now     func() time.Time
}

// Request is one model request and what the wire knows about its answer.
type Request struct {
	// Body is the encoded request, sent with Content-Type application/json.
	Body []byte
	// Header adds the wire's own headers (authentication, API version).
	Header func(http.Header)
	// Failure reads the bounded body of a non-2xx response (or of a JSON
	// answer where a stream was expected) and returns the failure class and
	// the server's message, "" when it has none. The message is redacted
	// and bounded afterwards.
	Failure func(status int, body []byte) (class error, message string)
	// Decode reads a successful event-stream body; see DecodeFunc.
	Decode DecodeFunc
	// Revise, when set, sees every failure that happened before anything
	// reached the consumer. Returning a body sends it at once in place of
	// the failed one, without counting a retry: for a request the endpoint
	// refused in a form the wire can change (a feature the model lacks).
	Revise func(*agent.ProviderError) ([]byte, bool)
}

// DecodeFunc reads one response body to its end. It passes text to emit as
// it arrives and returns the terminal chunk (ChunkDone or ChunkError) with
// true, or a zero chunk and false as soon as emit returns false (the
// consumer left). readErr turns a failure to read the body into the error
// to return: it knows whether the idle watchdog or a size bound cut it.
type DecodeFunc func(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool)

// Stream sends r and returns the answer's chunks. The channel carries
// whatever Decode emits and then exactly one ChunkDone or ChunkError, and
// is then closed.
//
// Transient failures (connection errors, 408, 409, 5xx, 429 with a
// retry-after of at most MaxRetryAfter, a stream cut or garbled before any
// of it was passed on, one silent wait for response headers and one empty
// answer) are retried with jittered backoff, never sooner than the server's
// retry-after, while nothing has been sent on the channel. After that a
// failure ends the stream: part of the answer is already out.
//
// The consumer must read until the channel is closed or cancel ctx. When
// ctx ends, the request is abandoned and the channel is closed, with a final
// ChunkError wrapping ctx's cause if the channel has room for it.
func (c *Client) Stream(ctx context.Context, r Request) <-chan agent.Chunk {
	out := make(chan agent.Chunk, 16)
	go c.run(ctx, r, out)
	return out
}

// run owns out: it is the only sender and closes it.
func (c *Client) run(ctx context.Context, r Request, out chan<- agent.Chunk) {
	defer close(out)
	emit := func(ch agent.Chunk) bool {
		select {
		case out <- ch:
			return true
		case <-ctx.Done():
			return false
		}
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = backoff.Sleep
	}
	body := r.Body
	var once retriedOnce
	for attempt := 0; ; attempt++ {
		o := c.attempt(ctx, r, body, emit)
		if o.gone || ctx.Err() != nil {
			break
		}
		if revised, ok := c.revise(r, o); ok {
			body = revised
			attempt-- // not a retry of a failure: a different request
			continue
		}
		if o.final.Type == agent.ChunkError && attempt < c.MaxRetries {
			if delay, retry := c.retryDelay(o, attempt, &once); retry {
				agent.ReportRetry(ctx, fmt.Sprintf("%v; retrying in %s (retry %d of %d)",
					o.final.Err, delay.Round(time.Millisecond), attempt+1, c.MaxRetries))
				if sleep(ctx, delay) != nil {
					break
				}
				continue
			}
		}
		emit(o.final)
		return
	}
	select { // best effort: the consumer may already be gone
	case out <- agent.Chunk{Type: agent.ChunkError, Err: fmt.Errorf("%s: %w", c.Prefix, context.Cause(ctx))}:
	default:
	}
}

// outcome is how one HTTP attempt ended.
type outcome struct {
	final   agent.Chunk // ChunkDone or ChunkError
	emitted bool        // something already reached the consumer: no retry
	silent  bool        // no response headers within the idle timeout
	gone    bool        // ctx ended or the consumer left; final is unset
}

// retriedOnce records the failures that get one more chance per request,
// not MaxRetries.
type retriedOnce struct {
	silent bool // the server sent no response headers in time
	empty  bool // the answer had no text and no tool call
}

// revise asks the wire whether a failure before any output calls for a
// different request.
func (c *Client) revise(r Request, o outcome) ([]byte, bool) {
	var pe *agent.ProviderError
	if r.Revise == nil || o.emitted || o.final.Type != agent.ChunkError || !errors.As(o.final.Err, &pe) {
		return nil, false
	}
	return r.Revise(pe)
}

// retryDelay decides whether a failed attempt is worth another one, and how
// long to wait first.
func (c *Client) retryDelay(o outcome, attempt int, once *retriedOnce) (time.Duration, bool) {
	var pe *agent.ProviderError
	if o.emitted || !errors.As(o.final.Err, &pe) {
		return 0, false
	}
	switch {
	case o.silent:
		// A server that does not answer at all gets one more chance, not
		// MaxRetries times the (long) idle timeout.
		if once.silent {
			return 0, false
		}
		once.silent = true
	case pe.Class == agent.ErrEmptyAnswer:
		// Seen from overloaded servers that end a stream with nothing in
		// it; asking again usually helps, asking often does not.
		if once.empty {
			return 0, false
		}
		once.empty = true
	case pe.RetryAfter > MaxRetryAfter:
		return 0, false // too long to hold a worker: let the caller park the task
	case !errors.Is(pe, agent.ErrTransient):
		return 0, false // rejected, too long for the window, or too large
	}
	// Stream failures count as transient (see agent.ProviderError.Is): tool
	// calls are passed on only complete, so a cut before any text loses nothing.
	return c.Backoff.Delay(attempt, pe.RetryAfter), true
}
