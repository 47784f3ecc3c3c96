package openai

import (
	"encoding/json"
	"net/http"
	"strings"

	"reasonix/agent"
)

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

// failureClass classifies an error response from its status and body, and
// returns the server's message ("" when it sent none).
func failureClass(status int, body []byte) (error, string) {
	e := parseErrorBody(body)
	return statusClass(status, e), e.Message
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
