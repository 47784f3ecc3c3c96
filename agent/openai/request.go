package openai

import (
	"encoding/json"
	"fmt"

	"reasonix/agent"
)

// chatRequest is the body of a streaming chat completions request.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Tools       []chatTool    `json:"tools,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	// ReasoningEffort is sent only when the request names an effort.
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	Stream          bool          `json:"stream"`
	StreamOptions   streamOptions `json:"stream_options"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, nil for an assistant message that only calls
	// tools (null is what OpenAI's own clients send; strict servers reject
	// "" there), or the []chatPart of a user message that shows images.
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// chatPart is one part of a user message's content: text or an image.
type chatPart struct {
	Type     string        `json:"type"` // "text" or "image_url"
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"` // a data: URL; nothing is fetched from elsewhere
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string         `json:"type"`
	Function chatToolSchema `json:"function"`
}

type chatToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema stands in for a tool without parameters: several servers
// reject a missing or null schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest renders req in the wire format, streaming with usage.
func (p *Provider) encodeRequest(req agent.Request) ([]byte, error) {
	body := chatRequest{
		Model:         req.Model,
		Messages:      make([]chatMessage, 0, len(req.Messages)),
		Temperature:   req.Temperature,
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
	}
	if body.Model == "" {
		body.Model = p.model
	}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	body.ReasoningEffort = wireEffort(req.Effort)
	var shown []chatPart // images of the tool results just encoded
	for _, m := range req.Messages {
		if m.Role != agent.RoleTool && len(shown) > 0 {
			body.Messages = append(body.Messages, chatMessage{Role: "user", Content: shown})
			shown = nil
		}
		shown = appendShown(shown, m)
		cm := chatMessage{Role: string(m.Role), ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			content := m.Content
			cm.Content = &content
		}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if args == "" {
				args = "{}"
			}
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: c.ID, Type: "function",
				Function: chatFunction{Name: c.Name, Arguments: args}})
		}
		body.Messages = append(body.Messages, cm)
	}
	if len(shown) > 0 {
		body.Messages = append(body.Messages, chatMessage{Role: "user", Content: shown})
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = emptySchema
		}
		body.Tools = append(body.Tools, chatTool{Type: "function",
			Function: chatToolSchema{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	data, err := json.Marshal(body)
	if err != nil {
		// Only a tool schema that is not valid JSON gets here.
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	return data, nil
}

// appendShown adds the images of a tool result to parts. A Chat
// Completions tool message is text only, and a user message may not come
// between the tool messages answering one assistant turn, so the images of
// a batch's results travel in one user message right after the batch,
// each introduced by a line naming the call it answers.
func appendShown(parts []chatPart, m agent.Message) []chatPart {
	if m.Role != agent.RoleTool || len(m.Images) == 0 {
		return parts
	}
	parts = append(parts, chatPart{Type: "text", Text: fmt.Sprintf("Shown by the result of %s call %s:", m.Name, m.ToolCallID)})
	for _, img := range m.Images {
		parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: img.DataURL()}})
	}
	return parts
}

// wireEffort maps an agent effort to the reasoning_effort vocabulary of
// OpenAI's APIs (Chat Completions and Responses alike): minimal, low,
// medium and high pass as they are; max, which these APIs do not name,
// becomes their highest, high. "" stays "" (nothing is sent).
func wireEffort(effort string) string {
	if effort == agent.EffortMax {
		return agent.EffortHigh
	}
	return effort
}
