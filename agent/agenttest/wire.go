package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"reasonix/agent"
)

// The OpenAI chat-completions wire format, written independently of
// agent/openai so that the fake checks the client instead of mirroring it.

// openaiWire is the chat completions endpoint: POST /v1/chat/completions,
// bearer authentication, a stream of chat.completion.chunk objects ending
// in "data: [DONE]".
type openaiWire struct{}

func (openaiWire) kind() string     { return "openai" }
func (openaiWire) basePath() string { return "/v1" }
func (openaiWire) path() string     { return "/chat/completions" }

func (openaiWire) apiKey(h http.Header) string { return bearer(h) }
func (openaiWire) refuse(http.Header) string   { return "" }

// bearer is the token of an "Authorization: Bearer" header.
func bearer(h http.Header) string {
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}

func (openaiWire) decode(body []byte, rec *Request) error { return decodeRequest(body, rec) }

func (openaiWire) writeError(w http.ResponseWriter, status int, retryAfter time.Duration, message, code string) {
	writeJSONError(w, status, retryAfter, newErrorBody(message, openaiErrorType(status), code))
}

// openaiErrorType is the error type OpenAI sends with a status.
func openaiErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func (openaiWire) plan(turn Turn, rec Request) []sseEvent {
	p := planStream(turn, rec.Model, rec.IncludeUsage)
	events := make([]sseEvent, 0, len(p.chunks)+1)
	for _, c := range p.chunks {
		data, _ := json.Marshal(c)
		events = append(events, sseEvent{data: data})
	}
	switch {
	case turn.StreamError:
		// An error object instead of [DONE], as OpenAI sends mid-stream.
		data, _ := json.Marshal(newErrorBody(turn.ErrorMessage, "server_error", turn.ErrorCode))
		events = append(events, sseEvent{data: data})
	case p.complete:
		events = append(events, sseEvent{data: []byte("[DONE]")})
	}
	return events
}

type wireRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Tools       []wireTool    `json:"tools"`
	Temperature *float64      `json:"temperature"`
	MaxTokens   int           `json:"max_tokens"`
	Effort      string        `json:"reasoning_effort"`
	Stream      bool          `json:"stream"`
	Options     *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, null, or text and image_url parts
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// decodeRequest fills the decoded fields of a Request from a JSON body.
func decodeRequest(body []byte, rec *Request) error {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return fmt.Errorf("agenttest: request body is not a chat completion request: %w", err)
	}
	rec.Model, rec.Temperature, rec.MaxTokens, rec.Stream = w.Model, w.Temperature, w.MaxTokens, w.Stream
	rec.Effort = w.Effort
	rec.IncludeUsage = w.Options != nil && w.Options.IncludeUsage
	for _, m := range w.Messages {
		msg := agent.Message{Role: agent.Role(m.Role), ToolCallID: m.ToolCallID, Name: m.Name}
		if err := chatContent(m.Content, &msg); err != nil {
			return err
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, agent.ToolSchema{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return nil
}

// chatContent reads a message's content, a string or an array of text and
// image_url parts, into msg.
func chatContent(raw json.RawMessage, msg *agent.Message) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if json.Unmarshal(raw, &msg.Content) == nil {
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("agenttest: message content is neither text nor parts: %w", err)
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			msg.Content += p.Text
		case "image_url":
			img, err := dataURLImage(p.ImageURL.URL)
			if err != nil {
				return err
			}
			msg.Images = append(msg.Images, img)
		default:
			return fmt.Errorf("agenttest: unknown content part type %q", p.Type)
		}
	}
	return nil
}

// The streamed chunk format.

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	Reasoning *string        `json:"reasoning_content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Details          struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

func newErrorBody(message, typ, code string) errorBody {
	var b errorBody
	b.Error.Message, b.Error.Type, b.Error.Code = message, typ, code
	return b
}
