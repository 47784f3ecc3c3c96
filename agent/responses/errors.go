package responses

import (
	"encoding/json"
	"net/http"
	"strings"

	"reasonix/agent"
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

// failureClass classifies an error response from its status and body, and
// returns the server's message ("" when it sent none).
func failureClass(status int, body []byte) (error, string) {
	e := parseErrorBody(body)
	return statusClass(status, e), e.Message
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
