package openai

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

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// maxMessage bounds the server text kept in an error message.
const maxMessage = 300

// apiError is the error object OpenAI-compatible servers send, as a body or
// in-stream. Code is a string for OpenAI and a number for some others.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// code returns the error code as text, whatever JSON type it had.
func (e apiError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	if len(e.Code) == 0 || string(e.Code) == "null" {
		return ""
	}
	return string(e.Code)
}

// httpFailure turns a non-2xx response into a classified error. It reads
// (a bounded prefix of) the body but does not close it.
func (p *Provider) httpFailure(resp *http.Response) *agent.ProviderError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	apiErr := parseErrorBody(raw)
	if apiErr.Message == "" {
		apiErr.Message = http.StatusText(resp.StatusCode)
	}
	class := statusClass(resp.StatusCode, apiErr)
	pe := &agent.ProviderError{Class: class, Status: resp.StatusCode, Message: p.safeMessage(apiErr.Message)}
	if class == agent.ErrRateLimited {
		pe.RetryAfter = retryAfter(resp.Header, p.now())
	}
	return pe
}

// parseErrorBody understands {"error":{...}}, {"error":"text"},
// {"message":"text"} and plain text.
func parseErrorBody(raw []byte) apiError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &env) == nil {
		var obj apiError
		if json.Unmarshal(env.Error, &obj) == nil && (obj.Message != "" || len(obj.Code) > 0) {
			return obj
		}
		var text string
		if json.Unmarshal(env.Error, &text) == nil && text != "" {
			return apiError{Message: text}
		}
		if env.Message != "" {
			return apiError{Message: env.Message}
		}
	}
	return apiError{Message: strings.TrimSpace(string(raw))}
}

// statusClass maps an HTTP status and the server's error to a failure class.
func statusClass(status int, e apiError) error {
	switch {
	case isContextTooLong(e):
		return agent.ErrContextTooLong
	case status == http.StatusTooManyRequests:
		if e.code() == "insufficient_quota" {
			return agent.ErrRejected // an empty account does not refill by waiting
		}
		return agent.ErrRateLimited
	case status == http.StatusRequestEntityTooLarge:
		return agent.ErrContextTooLong // only a smaller request can succeed
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return agent.ErrTransient
	default:
		return agent.ErrRejected
	}
}

// isContextTooLong recognises the ways servers say the conversation does not
// fit: OpenAI's code, and the wording of servers that send no code.
func isContextTooLong(e apiError) bool {
	if e.code() == "context_length_exceeded" {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, phrase := range []string{"maximum context length", "context length exceeded",
		"context_length_exceeded", "too many tokens", "prompt is too long", "exceeds the context window"} {
		if strings.Contains(msg, phrase) {
			return true
		}
	}
	return false
}

// retryAfter reads how long the server asked us to wait: retry-after-ms
// (Azure, OpenAI), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour // keeps absurd values from overflowing
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
		return min(time.Duration(ms*float64(time.Millisecond)), ceiling)
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || math.IsNaN(secs) {
			return 0
		}
		return min(time.Duration(math.Min(secs, ceiling.Seconds())*float64(time.Second)), ceiling)
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), ceiling)
	}
	return 0
}

// safeMessage redacts the key and truncates server text for an error.
func (p *Provider) safeMessage(s string) string {
	s = p.redact(strings.TrimSpace(s))
	if utf8.RuneCountInString(s) > maxMessage {
		s = string([]rune(s)[:maxMessage]) + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	return s
}

// streamError is a failure of the stream after the response started.
func (p *Provider) streamError(msg string) *agent.ProviderError {
	return &agent.ProviderError{Class: agent.ErrStream, Message: p.safeMessage(msg)}
}
