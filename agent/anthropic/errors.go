package anthropic

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"reasonix/agent"
)

// Bounds on server text: how much of an error body is read, and kept.
const (
	maxErrorBody = 64 << 10
	maxMessage   = 300
)

// apiError is the error object of the Messages API, sent as the body of a
// failed response ({"type":"error","error":{...}}) or as an "error" event.
type apiError struct {
	Type    string `json:"type"` // e.g. "overloaded_error", "invalid_request_error"
	Message string `json:"message"`
}

// httpFailure turns a non-2xx response into a classified error. It reads a
// bounded prefix of the body and leaves closing it to the caller.
func (p *Provider) httpFailure(resp *http.Response) *agent.ProviderError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := parseErrorBody(raw)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	pe := &agent.ProviderError{Class: statusClass(resp.StatusCode, e), Status: resp.StatusCode, Message: p.safeMessage(e.Message)}
	if pe.Class == agent.ErrRateLimited || pe.Class == agent.ErrTransient {
		// 529 (overloaded) sends retry-after too; it is a floor either way.
		pe.RetryAfter = retryAfter(resp.Header, p.now())
	}
	return pe
}

// parseErrorBody understands the API's error envelope and falls back to the
// body as text (a proxy's HTML page, say).
func parseErrorBody(raw []byte) apiError {
	var env struct {
		Error apiError `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && (env.Error.Message != "" || env.Error.Type != "") {
		return env.Error
	}
	return apiError{Message: strings.TrimSpace(string(raw))}
}

// statusClass maps an HTTP status and the API's error to a failure class.
func statusClass(status int, e apiError) error {
	switch {
	case isContextTooLong(e), status == http.StatusRequestEntityTooLarge:
		return agent.ErrContextTooLong // only a smaller request can succeed
	case status == http.StatusTooManyRequests:
		return agent.ErrRateLimited
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return agent.ErrTransient // 529 is "overloaded": it passes
	default:
		return agent.ErrRejected // 400, 401, 403, 404: asking again will not help
	}
}

// isContextTooLong recognises the API's way of saying the conversation does
// not fit: an invalid_request_error whose message says so.
func isContextTooLong(e apiError) bool {
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "context window") ||
		strings.Contains(msg, "context length")
}

// eventClass classifies an "error" event inside a 200 stream.
func eventClass(e apiError) error {
	switch {
	case isContextTooLong(e):
		return agent.ErrContextTooLong
	case e.Type == "rate_limit_error":
		return agent.ErrRateLimited
	case e.Type == "overloaded_error", e.Type == "api_error", e.Type == "timeout_error":
		return agent.ErrTransient
	case e.Type == "invalid_request_error", e.Type == "authentication_error", e.Type == "permission_error":
		return agent.ErrRejected
	}
	return agent.ErrStream
}

// retryAfter reads the retry-after header: seconds, or an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour // absurd values must not overflow
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0) { // also NaN
			return 0
		}
		return time.Duration(math.Min(secs, ceiling.Seconds()) * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), ceiling)
	}
	return 0
}

// safeMessage removes the key from server text and bounds its length, so
// it can go into an error that is logged.
func (p *Provider) safeMessage(s string) string {
	s = strings.TrimSpace(s)
	if p.key != "" {
		s = strings.ReplaceAll(s, p.key, "[REDACTED]")
	}
	if utf8.RuneCountInString(s) > maxMessage {
		s = string([]rune(s)[:maxMessage]) + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// streamError is a failure of the stream after the response started.
func (p *Provider) streamError(msg string) *agent.ProviderError {
	return &agent.ProviderError{Class: agent.ErrStream, Message: p.safeMessage(msg)}
}
