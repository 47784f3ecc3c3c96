package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"reasonix/agent"
)

// responsesWire is the OpenAI Responses API: POST /v1/responses with bearer
// authentication, answered by a stream of typed events about output items
// (messages, function calls) that ends in response.completed, written from
// OpenAI's documentation independently of agent/responses.
type responsesWire struct{}

func (responsesWire) kind() string     { return "responses" }
func (responsesWire) basePath() string { return "/v1" }
func (responsesWire) path() string     { return "/responses" }

func (responsesWire) apiKey(h http.Header) string { return bearer(h) }
func (responsesWire) refuse(http.Header) string   { return "" }

// responsesRequest is the part of a create-response request the fake reads.
type responsesRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Input        []json.RawMessage `json:"input"`
	Tools        []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	Temperature *float64 `json:"temperature"`
	MaxOutput   int      `json:"max_output_tokens"`
	Reasoning   *struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary"`
	} `json:"reasoning"`
	Stream bool `json:"stream"`
}

// responsesItem is an input item: a message (content a string or parts), a
// function call, its output, or a reasoning item (skipped).
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"` // a string, or input_text and input_image parts
}

// outputMessage reads a function call's output, a string or an array of
// input_text and input_image parts, as a tool message.
func outputMessage(it responsesItem) (agent.Message, error) {
	msg := agent.Message{Role: agent.RoleTool, ToolCallID: it.CallID}
	if len(it.Output) == 0 || json.Unmarshal(it.Output, &msg.Content) == nil {
		return msg, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL string `json:"image_url"`
	}
	if err := json.Unmarshal(it.Output, &parts); err != nil {
		return msg, fmt.Errorf("agenttest: output of %q is neither text nor parts: %w", it.CallID, err)
	}
	for _, p := range parts {
		switch p.Type {
		case "input_text":
			msg.Content += p.Text
		case "input_image":
			img, err := dataURLImage(p.ImageURL)
			if err != nil {
				return msg, err
			}
			msg.Images = append(msg.Images, img)
		default:
			return msg, fmt.Errorf("agenttest: output of %q holds a %q part", it.CallID, p.Type)
		}
	}
	return msg, nil
}

// partsText reads message content that is a string or an array of
// input_text / output_text parts.
func partsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	for _, p := range parts {
		text += p.Text
	}
	return text, nil
}

// decode maps the request back to agent messages: the instructions are one
// system message; function calls join the assistant message before them
// (or start one); each function call output is a tool message.
func (responsesWire) decode(body []byte, rec *Request) error {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("agenttest: request body is not a Responses request: %w", err)
	}
	rec.Model, rec.Temperature, rec.MaxTokens, rec.Stream = req.Model, req.Temperature, req.MaxOutput, req.Stream
	if req.Reasoning != nil {
		rec.Effort, rec.ReasoningSummary = req.Reasoning.Effort, req.Reasoning.Summary
	}
	rec.IncludeUsage = true // response.completed always carries usage
	if req.Instructions != "" {
		rec.Messages = append(rec.Messages, agent.Message{Role: agent.RoleSystem, Content: req.Instructions})
	}
	for i, raw := range req.Input {
		var it responsesItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("agenttest: input item %d is malformed: %w", i, err)
		}
		switch it.Type {
		case "message", "":
			text, err := partsText(it.Content)
			if err != nil {
				return fmt.Errorf("agenttest: input item %d has malformed content: %w", i, err)
			}
			rec.Messages = append(rec.Messages, agent.Message{Role: agent.Role(it.Role), Content: text})
		case "function_call":
			call := agent.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			if n := len(rec.Messages); n > 0 && rec.Messages[n-1].Role == agent.RoleAssistant {
				rec.Messages[n-1].ToolCalls = append(rec.Messages[n-1].ToolCalls, call)
			} else {
				rec.Messages = append(rec.Messages, agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}})
			}
		case "function_call_output":
			msg, err := outputMessage(it)
			if err != nil {
				return fmt.Errorf("agenttest: input item %d: %w", i, err)
			}
			rec.Messages = append(rec.Messages, msg)
		case "reasoning":
			// Opaque to the fake: the model's own state.
		default:
			return fmt.Errorf("agenttest: input item %d has unknown type %q", i, it.Type)
		}
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, agent.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return nil
}

func (responsesWire) writeError(w http.ResponseWriter, status int, retryAfter time.Duration, message, code string) {
	writeJSONError(w, status, retryAfter, newErrorBody(message, openaiErrorType(status), code))
}

func (responsesWire) plan(turn Turn, rec Request) []sseEvent {
	var events []sseEvent
	type obj = map[string]any
	add := func(typ string, v obj) {
		v["type"] = typ
		v["sequence_number"] = len(events)
		data, _ := json.Marshal(v)
		events = append(events, sseEvent{name: typ, data: data})
	}
	response := func(status string) obj {
		return obj{"id": "resp_fake", "object": "response", "created_at": 1767225600, "status": status,
			"model": rec.Model, "output": []any{}, "usage": nil}
	}
	add("response.created", obj{"response": response("in_progress")})
	add("response.in_progress", obj{"response": response("in_progress")})
	out := 0
	if turn.Thinking != "" {
		// A reasoning item first. OpenAI's models stream a summary of
		// their reasoning only when the request asked for one
		// (reasoning.summary); open models behind a Responses endpoint
		// stream the reasoning's text itself. Either way the finished item
		// carries the opaque state that goes back on the next request.
		add("response.output_item.added", obj{"output_index": out, "item": obj{"id": "rs_fake", "type": "reasoning", "summary": []any{}}})
		done := obj{"id": "rs_fake", "type": "reasoning", "summary": []any{}, "encrypted_content": "gAAAA-fake-reasoning"}
		if rec.ReasoningSummary != "" {
			part := obj{"type": "summary_text", "text": ""}
			add("response.reasoning_summary_part.added", obj{"item_id": "rs_fake", "output_index": out, "summary_index": 0, "part": part})
			for _, piece := range splitN(turn.Thinking, 2) {
				add("response.reasoning_summary_text.delta", obj{"item_id": "rs_fake", "output_index": out, "summary_index": 0, "delta": piece})
			}
			add("response.reasoning_summary_text.done", obj{"item_id": "rs_fake", "output_index": out, "summary_index": 0, "text": turn.Thinking})
			full := obj{"type": "summary_text", "text": turn.Thinking}
			add("response.reasoning_summary_part.done", obj{"item_id": "rs_fake", "output_index": out, "summary_index": 0, "part": full})
			done["summary"] = []any{full}
		} else {
			for _, piece := range splitN(turn.Thinking, 2) {
				add("response.reasoning_text.delta", obj{"item_id": "rs_fake", "output_index": out, "content_index": 0, "delta": piece})
			}
			add("response.reasoning_text.done", obj{"item_id": "rs_fake", "output_index": out, "content_index": 0, "text": turn.Thinking})
			done["content"] = []any{obj{"type": "reasoning_text", "text": turn.Thinking}}
		}
		add("response.output_item.done", obj{"output_index": out, "item": done})
		out++
	}
	if turn.Text != "" {
		item := obj{"id": "msg_fake", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
		add("response.output_item.added", obj{"output_index": out, "item": item})
		add("response.content_part.added", obj{"item_id": "msg_fake", "output_index": out, "content_index": 0,
			"part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, piece := range splitN(turn.Text, 3) {
			add("response.output_text.delta", obj{"item_id": "msg_fake", "output_index": out, "content_index": 0, "delta": piece})
		}
		add("response.output_text.done", obj{"item_id": "msg_fake", "output_index": out, "content_index": 0, "text": turn.Text})
		part := obj{"type": "output_text", "text": turn.Text, "annotations": []any{}}
		add("response.content_part.done", obj{"item_id": "msg_fake", "output_index": out, "content_index": 0, "part": part})
		add("response.output_item.done", obj{"output_index": out, "item": obj{"id": "msg_fake", "type": "message",
			"status": "completed", "role": "assistant", "content": []any{part}}})
		out++
	}
	for n, c := range turn.ToolCalls {
		id := fmt.Sprintf("fc_fake_%d", n)
		item := func(status, args string) obj {
			return obj{"id": id, "type": "function_call", "status": status, "call_id": c.ID, "name": c.Name, "arguments": args}
		}
		add("response.output_item.added", obj{"output_index": out, "item": item("in_progress", "")})
		pieces := splitN(c.Arguments, 3)
		if turn.Cut && n == len(turn.ToolCalls)-1 {
			if len(pieces) > 0 {
				add("response.function_call_arguments.delta", obj{"item_id": id, "output_index": out, "delta": pieces[0]})
			}
			return events
		}
		for _, piece := range pieces {
			add("response.function_call_arguments.delta", obj{"item_id": id, "output_index": out, "delta": piece})
		}
		add("response.function_call_arguments.done", obj{"item_id": id, "output_index": out, "arguments": c.Arguments})
		add("response.output_item.done", obj{"output_index": out, "item": item("completed", c.Arguments)})
		out++
	}
	switch {
	case turn.StreamError:
		code := turn.ErrorCode
		if code == "" {
			code = "server_error"
		}
		failed := response("failed")
		failed["error"] = obj{"code": code, "message": turn.ErrorMessage}
		add("response.failed", obj{"response": failed})
		return events
	case turn.Cut, turn.Stall, turn.Garble:
		return events
	}
	u := turn.Usage
	final := response("completed")
	// input_tokens includes the part read from the cache.
	final["usage"] = obj{"input_tokens": u.Prompt, "input_tokens_details": obj{"cached_tokens": u.Cached},
		"output_tokens": u.Completion, "output_tokens_details": obj{"reasoning_tokens": 0},
		"total_tokens": u.Prompt + u.Completion}
	switch finish := turn.finishReason(); finish {
	case "length", "content_filter":
		reason := "max_output_tokens"
		if finish == "content_filter" {
			reason = finish
		}
		final["status"] = "incomplete"
		final["incomplete_details"] = obj{"reason": reason}
		add("response.incomplete", obj{"response": final})
	default:
		add("response.completed", obj{"response": final})
	}
	return events
}
