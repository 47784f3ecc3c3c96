package responses

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

// apiError is OpenAI's error object: the body of a failed response
// ({"error":{...}}), the error of a failed response, or an "error" event.
type apiError struct {
	Code    string `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// UnmarshalJSON accepts a code of any JSON type: proxies send numbers.
func (e *apiError) UnmarshalJSON(b []byte) error {
	var raw struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Type, e.Message = raw.Type, raw.Message
	if json.Unmarshal(raw.Code, &e.Code) != nil && len(raw.Code) > 0 && string(raw.Code) != "null" {
		e.Code = string(raw.Code)
	}
	return nil
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
		pe.RetryAfter = retryAfter(resp.Header, p.now())
	}
	return pe
}

// parseErrorBody understands {"error":{...}} and falls back to the body as
// text (a proxy's HTML page, say).
func parseErrorBody(raw []byte) apiError {
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil && (env.Error.Message != "" || env.Error.Code != "") {
		return *env.Error
	}
	return apiError{Message: strings.TrimSpace(string(raw))}
}

// statusClass maps an HTTP status and the server's error to a failure class.
func statusClass(status int, e apiError) error {
	switch {
	case isContextTooLong(e), status == http.StatusRequestEntityTooLarge:
		return agent.ErrContextTooLong
	case status == http.StatusTooManyRequests && e.Code == "insufficient_quota":
		return agent.ErrRejected // an empty account does not refill by waiting
	case status == http.StatusTooManyRequests:
		return agent.ErrRateLimited
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return agent.ErrTransient
	default:
		return agent.ErrRejected
	}
}

// eventClass classifies the error of a failed response or an error event.
func eventClass(e apiError) error {
	switch {
	case isContextTooLong(e):
		return agent.ErrContextTooLong
	case e.Code == "rate_limit_exceeded":
		return agent.ErrRateLimited
	case e.Code == "server_error", e.Code == "server_is_overloaded", e.Type == "server_error":
		return agent.ErrTransient
	case e.Code == "invalid_prompt", e.Type == "invalid_request_error":
		return agent.ErrRejected
	}
	return agent.ErrStream
}

func isContextTooLong(e apiError) bool {
	if e.Code == "context_length_exceeded" {
		return true
	}
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "context window") || strings.Contains(msg, "maximum context length")
}

// retryAfter reads how long the server asked us to wait: retry-after-ms
// when present (finer), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour // absurd values must not overflow
	seconds := func(v string, unit float64) (time.Duration, bool) {
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		if !(n > 0) { // also NaN
			return 0, true
		}
		return time.Duration(math.Min(n*unit, ceiling.Seconds()) * float64(time.Second)), true
	}
	if d, ok := seconds(h.Get("Retry-After-Ms"), 1e-3); ok && d > 0 {
		return d
	}
	v := h.Get("Retry-After")
	if d, ok := seconds(v, 1); ok {
		return d
	}
	if at, err := http.ParseTime(strings.TrimSpace(v)); err == nil {
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
