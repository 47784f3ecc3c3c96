package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"

	"reasonix/agent"
)

// apiError is the error object of the Messages API, sent as the body of a
// failed response ({"type":"error","error":{...}}) or as an "error" event.
type apiError struct {
	Type    string `json:"type"` // e.g. "overloaded_error", "invalid_request_error"
	Message string `json:"message"`
}

// failureClass classifies an error response from its status and body, and
// returns the API's message ("" when it sent none).
func failureClass(status int, body []byte) (error, string) {
	e := parseErrorBody(body)
	return statusClass(status, e), e.Message
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
