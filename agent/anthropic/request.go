package anthropic

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"reasonix/agent"
)

// messagesRequest is the body of a streaming Messages API request.
type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      []block   `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	Tools       []tool    `json:"tools,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	// Thinking is sent only when the request names an effort (thinking.go).
	Thinking *thinkingConfig `json:"thinking,omitempty"`
	Stream   bool            `json:"stream"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is one content block; which fields are set depends on Type.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`        // text
	ID        string          `json:"id,omitempty"`          // tool_use
	Name      string          `json:"name,omitempty"`        // tool_use
	Input     json.RawMessage `json:"input,omitempty"`       // tool_use
	ToolUseID string          `json:"tool_use_id,omitempty"` // tool_result
	// Content of a tool_result: its text (a string, left out when empty),
	// or, when the result shows images, a []block of text and images.
	Content any           `json:"content,omitempty"`
	Source  *imageSource  `json:"source,omitempty"` // image
	Cache   *cacheControl `json:"cache_control,omitempty"`
	// Thinking, Signature (thinking) and Data (redacted_thinking) replay
	// an earlier answer's reasoning (thinking.go).
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
}

// imageSource is an image block's inline picture.
type imageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Cache       *cacheControl   `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral marks the end of a cacheable prefix. The API caches everything
// up to a marked block (tools, then system, then messages), so one mark on
// the last tool, one on the system prompt and one on the newest message make
// every step reuse all of the previous one.
var ephemeral = &cacheControl{Type: "ephemeral"}

// emptySchema stands in for a tool without parameters: input_schema is required.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest renders req in the Messages API format.
func (p *Provider) encodeRequest(req agent.Request) ([]byte, error) {
	body := messagesRequest{
		Model:       cmp.Or(req.Model, p.model),
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		Stream:      true,
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultMaxTokens
	}
	if budget := ThinkingBudget(req.Effort); budget > 0 {
		body.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
		// The budget is part of max_tokens and must be below it; the answer
		// keeps the room it had. The API refuses a temperature with thinking.
		if body.MaxTokens <= budget {
			body.MaxTokens += budget
		}
		body.Temperature = nil
	}
	msgs := req.Messages
	// Leading system messages are the system prompt. A system message later
	// in the conversation has no place in the Messages API; it goes to the
	// model as user text so nothing is lost.
	for len(msgs) > 0 && msgs[0].Role == agent.RoleSystem {
		if msgs[0].Content != "" {
			body.System = append(body.System, block{Type: "text", Text: msgs[0].Content})
		}
		msgs = msgs[1:]
	}
	if n := len(body.System); n > 0 {
		body.System[n-1].Cache = ephemeral
	}
	for _, m := range msgs {
		role, blocks := toBlocks(m)
		if len(blocks) == 0 {
			continue // the API rejects empty content; an empty message says nothing
		}
		// Consecutive messages of one role become one message: tool results
		// of a batch (and a steering note after them) answer one assistant turn.
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			continue
		}
		body.Messages = append(body.Messages, message{Role: role, Content: blocks})
	}
	for _, m := range body.Messages {
		if m.Role == "user" {
			// Tool results answer the previous turn and must lead their
			// message; a note that arrived between them moves after them.
			slices.SortStableFunc(m.Content, func(a, b block) int { return resultFirst(a) - resultFirst(b) })
		}
	}
	if n := len(body.Messages); n > 0 {
		last := body.Messages[n-1].Content
		last[len(last)-1].Cache = ephemeral
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptySchema
		}
		body.Tools = append(body.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(body.Tools); n > 0 {
		body.Tools[n-1].Cache = ephemeral
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding request: %w", err) // only an invalid tool schema gets here
	}
	return data, nil
}

func resultFirst(b block) int {
	if b.Type == "tool_result" {
		return 0
	}
	return 1
}

// toBlocks maps one agent message to a Messages API role and content.
func toBlocks(m agent.Message) (string, []block) {
	switch m.Role {
	case agent.RoleAssistant:
		blocks := thinkingBlocks(m.ProviderState)
		if m.Content != "" {
			blocks = append(blocks, block{Type: "text", Text: m.Content})
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: toolInput(c.Arguments)})
		}
		return "assistant", blocks
	case agent.RoleTool:
		return "user", []block{toolResult(m)}
	default:
		if m.Content == "" {
			return "user", nil
		}
		return "user", []block{{Type: "text", Text: m.Content}}
	}
}

// toolResult is a tool message as a tool_result block. The Messages API
// takes image blocks inside a tool_result's content, so the images a result
// shows travel with it, after its text.
func toolResult(m agent.Message) block {
	b := block{Type: "tool_result", ToolUseID: m.ToolCallID}
	if len(m.Images) == 0 {
		if m.Content != "" {
			b.Content = m.Content
		}
		return b
	}
	parts := make([]block, 0, 1+len(m.Images))
	if m.Content != "" {
		parts = append(parts, block{Type: "text", Text: m.Content})
	}
	for _, img := range m.Images {
		parts = append(parts, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MediaType, Data: img.Base64()}})
	}
	b.Content = parts
	return b
}

// toolInput is the call's arguments as the JSON object the API requires. A
// model may have produced malformed arguments (the tool told it so); the
// call is still replayed, with an empty input, so the history stays valid.
func toolInput(args string) json.RawMessage {
	raw := json.RawMessage(args)
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return raw
}
