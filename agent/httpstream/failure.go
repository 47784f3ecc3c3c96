package httpstream

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"reasonix/agent"
)

// Bounds on server text: how much of an error body is read, and how much
// of the server's message is kept in an error.
const (
	maxErrorBody = 64 << 10
	maxMessage   = 300
)

// Redacted replaces the API key in messages.
const Redacted = "[REDACTED]"

// httpFailure turns a non-2xx response (or a JSON answer to a streaming
// request) into a classified error. It reads a bounded prefix of the body
// and leaves closing it to the caller.
func (c *Client) httpFailure(r Request, resp *http.Response) *agent.ProviderError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	class, msg := r.Failure(resp.StatusCode, raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	pe := &agent.ProviderError{Class: class, Status: resp.StatusCode, Message: c.SafeMessage(msg)}
	if class == agent.ErrRateLimited || class == agent.ErrTransient {
		// An overloaded server (503, Anthropic's 529) may say when to come
		// back too; it is a floor either way.
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		pe.RetryAfter = RetryAfter(resp.Header, now())
	}
	return pe
}

// SafeMessage removes the key from s, trims it and bounds its length, so
// server text can go into an error that is logged. The key is removed
// before truncating, so no prefix of it survives.
func (c *Client) SafeMessage(s string) string { return SafeMessage(c.Key, s) }

// SafeMessage is Client.SafeMessage for a key outside a Client.
func SafeMessage(key, s string) string {
	s = strings.TrimSpace(s)
	if key != "" {
		s = strings.ReplaceAll(s, key, Redacted)
	}
	if utf8.RuneCountInString(s) > maxMessage {
		s = string([]rune(s)[:maxMessage]) + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// StreamError is a failure of the stream after the response started.
func (c *Client) StreamError(msg string) *agent.ProviderError {
	return &agent.ProviderError{Class: agent.ErrStream, Message: c.SafeMessage(msg)}
}

// CountOutput adds n bytes of answer to *total and returns the
// ErrOutputTooLarge failure once the total passes MaxOutputBytes: the caller
// would hold all of it (text in the transcript, arguments in memory until
// the call is complete).
func (c *Client) CountOutput(total *int, n int) *agent.ProviderError {
	*total += n
	if c.MaxOutputBytes > 0 && *total > c.MaxOutputBytes {
		return &agent.ProviderError{Class: agent.ErrOutputTooLarge, Message: c.SafeMessage(
			fmt.Sprintf("the answer is larger than %d bytes of text and tool calls (max_output_bytes)", c.MaxOutputBytes))}
	}
	return nil
}

// RetryAfter reads how long the server asked to wait: retry-after-ms
// (OpenAI, Azure) when present and positive, for its finer grain; else
// Retry-After in seconds or as an HTTP date. It returns 0 when there is no
// usable value, and at most a day, so absurd values cannot overflow.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
		return time.Duration(math.Min(ms*float64(time.Millisecond), float64(ceiling)))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0) { // also NaN
			return 0
		}
		return min(time.Duration(math.Min(secs, ceiling.Seconds())*float64(time.Second)), ceiling)
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), ceiling)
	}
	return 0
}
