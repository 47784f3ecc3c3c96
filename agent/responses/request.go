package responses

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

// createRequest is the body of a streaming Responses API request.
type createRequest struct {
	Model        string   `json:"model"`
	Instructions string   `json:"instructions,omitempty"`
	Input        []any    `json:"input"` // inputItem values and opaque reasoning items
	Tools        []tool   `json:"tools,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty"`
	MaxOutput    int      `json:"max_output_tokens,omitempty"`
	// Reasoning is sent only when the request names an effort.
	Reasoning *reasoningOptions `json:"reasoning,omitempty"`
	Stream    bool              `json:"stream"`
	// Store is false: the server keeps no conversation state, so a retry
	// or a resumed task never depends on what it remembers. Reasoning then
	// has to travel with the input, which is why it is included encrypted.
	Store   bool     `json:"store"`
	Include []string `json:"include,omitempty"`
}

// reasoningOptions is the request's reasoning object.
type reasoningOptions struct {
	Effort string `json:"effort"`
	// Summary asks for a summary of the reasoning ("auto"), which streams
	// as thinking; the reasoning itself never leaves OpenAI's servers.
	Summary string `json:"summary,omitempty"`
}

// inputItem is one message, function call or function call output.
type inputItem struct {
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"`      // message
	Content   *string `json:"content,omitempty"`   // message
	CallID    string  `json:"call_id,omitempty"`   // function_call, function_call_output
	Name      string  `json:"name,omitempty"`      // function_call
	Arguments string  `json:"arguments,omitempty"` // function_call
	// Output of a function_call_output: a *string, or the []outputPart of
	// a result that shows images.
	Output any `json:"output,omitempty"`
}

// outputPart is one part of a function call's output: text or an image.
type outputPart struct {
	Type     string `json:"type"` // "input_text" or "input_image"
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"` // a data: URL
	Detail   string `json:"detail,omitempty"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict would require every schema to meet OpenAI's strict subset,
	// which tools from MCP servers do not promise.
	Strict bool `json:"strict"`
}

// emptySchema stands in for a tool without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest renders req in the Responses API format.
func (p *Provider) encodeRequest(req agent.Request) ([]byte, error) {
	body := createRequest{
		Model:       cmp.Or(req.Model, p.model),
		Input:       make([]any, 0, len(req.Messages)),
		Temperature: req.Temperature,
		MaxOutput:   max(req.MaxTokens, 0),
		Stream:      true,
	}
	if e := wireEffort(req.Effort); e != "" {
		body.Reasoning = &reasoningOptions{Effort: e}
		// A request that names an effort is to a reasoning model: ask it
		// for the summary an editor shows while it thinks, unless this
		// endpoint refused to give one (an organisation that is not
		// verified for summaries) or has no reasoning at all.
		if !p.noSummary.Load() && !p.plainReasoning.Load() {
			body.Reasoning.Summary = "auto"
		}
	}
	if !p.plainReasoning.Load() {
		body.Include = []string{"reasoning.encrypted_content"}
	}
	msgs := req.Messages
	// Leading system messages are the instructions; a later one stays in
	// place as a system message of the input.
	var instructions []string
	for len(msgs) > 0 && msgs[0].Role == agent.RoleSystem {
		if msgs[0].Content != "" {
			instructions = append(instructions, msgs[0].Content)
		}
		msgs = msgs[1:]
	}
	body.Instructions = strings.Join(instructions, "\n\n")
	for _, m := range msgs {
		body.Input = appendItems(body.Input, m)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = emptySchema
		}
		body.Tools = append(body.Tools, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("responses: encoding request: %w", err) // only an invalid tool schema gets here
	}
	return data, nil
}

// appendItems adds the input items of one agent message.
func appendItems(items []any, m agent.Message) []any {
	switch m.Role {
	case agent.RoleAssistant:
		// Reasoning first: it is what led to the text and calls after it.
		for _, r := range reasoningItems(m.ProviderState) {
			items = append(items, r)
		}
		if m.Content != "" {
			items = append(items, inputItem{Type: "message", Role: "assistant", Content: &m.Content})
		}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			items = append(items, inputItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args})
		}
	case agent.RoleTool:
		items = append(items, inputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: toolOutput(&m)})
	default:
		items = append(items, inputItem{Type: "message", Role: string(m.Role), Content: &m.Content})
	}
	return items
}

// toolOutput is a tool message's output. The Responses API takes an array
// of input_text and input_image parts as a function call's output, so the
// images a result shows travel with it, after its text.
func toolOutput(m *agent.Message) any {
	if len(m.Images) == 0 {
		return &m.Content
	}
	parts := make([]outputPart, 0, 1+len(m.Images))
	if m.Content != "" {
		parts = append(parts, outputPart{Type: "input_text", Text: m.Content})
	}
	for _, img := range m.Images {
		parts = append(parts, outputPart{Type: "input_image", ImageURL: img.DataURL(), Detail: "auto"})
	}
	return parts
}

// wireEffort maps an agent effort to the Responses API's reasoning.effort:
// minimal, low, medium and high pass as they are; max, which the API does
// not name, becomes its highest, high.
func wireEffort(effort string) string {
	if effort == agent.EffortMax {
		return agent.EffortHigh
	}
	return effort
}
