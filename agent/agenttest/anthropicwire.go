package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"reasonix/agent"
)

// anthropicWire is the Anthropic Messages API: POST /v1/messages with an
// x-api-key header, answered by a stream of named events (message_start,
// content blocks with their deltas, message_delta, message_stop), written
// from Anthropic's documentation independently of agent/anthropic.
type anthropicWire struct{}

func (anthropicWire) kind() string     { return "anthropic" }
func (anthropicWire) basePath() string { return "" }
func (anthropicWire) path() string     { return "/v1/messages" }

func (anthropicWire) apiKey(h http.Header) string { return h.Get("X-Api-Key") }

// refuse requires the anthropic-version header, as the API does.
func (anthropicWire) refuse(h http.Header) string {
	if h.Get("Anthropic-Version") == "" {
		return "anthropic-version: header is required"
	}
	return ""
}

// anthropicRequest is the part of a Messages request the fake reads. System
// and message content may each be a string or an array of blocks.
type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Temperature *float64 `json:"temperature"`
	Thinking    *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	Stream bool `json:"stream"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or text and image blocks
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"` // image
}

// imageOf reads an image block's inline base64 picture.
func imageOf(b anthropicBlock) (agent.Image, error) {
	if b.Source == nil || b.Source.Type != "base64" {
		return agent.Image{}, fmt.Errorf("agenttest: image block without a base64 source")
	}
	return base64Image(b.Source.MediaType, b.Source.Data)
}

// resultMessage reads a tool_result block: its text blocks and images.
func resultMessage(b anthropicBlock) (agent.Message, error) {
	msg := agent.Message{Role: agent.RoleTool, ToolCallID: b.ToolUseID}
	bs, err := blocks(b.Content)
	if err != nil {
		return msg, fmt.Errorf("agenttest: tool_result %q has malformed content: %w", b.ToolUseID, err)
	}
	for _, c := range bs {
		switch c.Type {
		case "text":
			msg.Content += c.Text
		case "image":
			img, err := imageOf(c)
			if err != nil {
				return msg, err
			}
			msg.Images = append(msg.Images, img)
		default:
			return msg, fmt.Errorf("agenttest: tool_result %q holds a %q block", b.ToolUseID, c.Type)
		}
	}
	return msg, nil
}

// blocks reads content that is a string (one text block) or an array of blocks.
func blocks(raw json.RawMessage) ([]anthropicBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []anthropicBlock{{Type: "text", Text: text}}, nil
	}
	var out []anthropicBlock
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// decode maps the request back to agent messages: each system block is a
// system message; an assistant message's text and tool_use blocks one
// assistant message; a user message's tool_result blocks one tool message
// each and its text a user message.
func (anthropicWire) decode(body []byte, rec *Request) error {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("agenttest: request body is not a Messages request: %w", err)
	}
	rec.Model, rec.Temperature, rec.MaxTokens, rec.Stream = req.Model, req.Temperature, req.MaxTokens, req.Stream
	if req.Thinking != nil && req.Thinking.Type == "enabled" {
		rec.ThinkingBudget = req.Thinking.BudgetTokens
	}
	rec.IncludeUsage = true // the Messages stream always reports usage
	system, err := blocks(req.System)
	if err != nil {
		return fmt.Errorf("agenttest: system is neither text nor blocks: %w", err)
	}
	for _, b := range system {
		rec.Messages = append(rec.Messages, agent.Message{Role: agent.RoleSystem, Content: b.Text})
	}
	for i, m := range req.Messages {
		bs, err := blocks(m.Content)
		if err != nil {
			return fmt.Errorf("agenttest: message %d has malformed content: %w", i, err)
		}
		if m.Role == "assistant" {
			msg := agent.Message{Role: agent.RoleAssistant}
			for _, b := range bs {
				switch b.Type {
				case "text":
					msg.Content += b.Text
				case "tool_use":
					var args bytes.Buffer
					if err := json.Compact(&args, b.Input); err != nil {
						return fmt.Errorf("agenttest: tool_use %q input is not JSON: %w", b.ID, err)
					}
					msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: args.String()})
				}
			}
			rec.Messages = append(rec.Messages, msg)
			continue
		}
		var text string
		for _, b := range bs {
			switch b.Type {
			case "tool_result":
				msg, err := resultMessage(b)
				if err != nil {
					return err
				}
				rec.Messages = append(rec.Messages, msg)
			case "text":
				text += b.Text
			}
		}
		if text != "" {
			rec.Messages = append(rec.Messages, agent.Message{Role: agent.RoleUser, Content: text})
		}
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, agent.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return nil
}

// anthropicErrorType is the error type the API sends with a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

type anthropicError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropicMessage words an error as the API does: a context overflow (the
// OpenAI code context_length_exceeded, which ContextTooLong sets) becomes
// "prompt is too long".
func anthropicMessage(message, code string) string {
	if code == "context_length_exceeded" {
		return "prompt is too long: 9001 tokens > 8192 maximum"
	}
	return message
}

func (anthropicWire) writeError(w http.ResponseWriter, status int, retryAfter time.Duration, message, code string) {
	w.Header().Set("Request-Id", "req_fake")
	writeJSONError(w, status, retryAfter, struct {
		Type      string         `json:"type"`
		Error     anthropicError `json:"error"`
		RequestID string         `json:"request_id"`
	}{"error", anthropicError{anthropicErrorType(status), anthropicMessage(message, code)}, "req_fake"})
}

func (anthropicWire) plan(turn Turn, rec Request) []sseEvent {
	var events []sseEvent
	add := func(name string, v any) {
		data, _ := json.Marshal(v)
		events = append(events, sseEvent{name: name, data: data})
	}
	type obj = map[string]any
	u := turn.Usage
	add("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": rec.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		// input_tokens counts only what was not read from the cache.
		"usage": obj{"input_tokens": u.Prompt - u.Cached, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": u.Cached, "output_tokens": 1},
	}})
	add("ping", obj{"type": "ping"})
	index := 0
	if turn.Thinking != "" {
		add("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": obj{"type": "thinking", "thinking": ""}})
		for _, piece := range splitN(turn.Thinking, 2) {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "thinking_delta", "thinking": piece}})
		}
		add("content_block_delta", obj{"type": "content_block_delta", "index": index,
			"delta": obj{"type": "signature_delta", "signature": "sig-fake"}})
		add("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	if turn.Text != "" {
		add("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": obj{"type": "text", "text": ""}})
		for _, piece := range splitN(turn.Text, 3) {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "text_delta", "text": piece}})
		}
		add("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	for n, c := range turn.ToolCalls {
		add("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
		// The API opens every input with an empty fragment.
		pieces := append([]string{""}, splitN(c.Arguments, 3)...)
		if turn.Cut && n == len(turn.ToolCalls)-1 {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "input_json_delta", "partial_json": pieces[min(1, len(pieces)-1)]}})
			return events
		}
		for _, piece := range pieces {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "input_json_delta", "partial_json": piece}})
		}
		add("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	switch {
	case turn.StreamError:
		typ := turn.ErrorCode
		if typ == "" {
			typ = "overloaded_error" // what the API sends mid-stream most often
		}
		add("error", obj{"type": "error", "error": anthropicError{typ, anthropicMessage(turn.ErrorMessage, turn.ErrorCode)}})
		return events
	case turn.Cut, turn.Stall, turn.Garble:
		return events
	}
	add("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": anthropicStopReason(turn.finishReason()), "stop_sequence": nil},
		"usage": obj{"output_tokens": u.Completion}})
	add("message_stop", obj{"type": "message_stop"})
	return events
}

// anthropicStopReason is the API's name for a finish reason.
func anthropicStopReason(finish string) string {
	switch finish {
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	case "stop":
		return "end_turn"
	}
	return finish
}
