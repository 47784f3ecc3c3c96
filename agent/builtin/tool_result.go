package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin(agent.ToolResultTool, func(agent.ToolEnv) agent.Tool { return toolResult{} })
}

// toolResult pages through the full text of a tool result that was bounded
// for the model (the seed's session:tool_result): the transcript keeps
// every result whole (Message.RawContent), and a result cut to its head
// and tail says which call to read here. It reads only the conversation
// it runs in: a sub-agent reads its own results, never its parent's.
type toolResult struct{}

var _ agent.ReadOnlyTool = toolResult{}

// The page sizes, in bytes of UTF-8 text.
const (
	toolResultPage    = 16 * 1024
	toolResultMaxPage = 24 * 1024
)

func (toolResult) Name() string   { return agent.ToolResultTool }
func (toolResult) ReadOnly() bool { return true }
func (toolResult) Description() string {
	return "Read the full text of an earlier tool result of this conversation, page by page, by its tool_call_id. " +
		"Use it when a result was cut (it then says how to read the rest). offset and next_offset are byte offsets."
}

func (toolResult) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "tool_call_id": {"type": "string", "description": "The id of the call whose result to read."},
    "offset": {"type": "integer", "minimum": 0, "description": "Byte offset to start at (default 0)."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 24576, "description": "Most bytes to return (default 16384, at most 24576)."}
  },
  "required": ["tool_call_id"],
  "additionalProperties": false
}`)
}

type toolResultArgs struct {
	ToolCallID string `json:"tool_call_id"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
}

func (toolResult) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a toolResultArgs
	if err := decodeArgs(agent.ToolResultTool, raw, &a, "tool_call_id"); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.ToolCallID) == "" {
		return "", errors.New("tool_result: tool_call_id must not be empty")
	}
	if a.Offset < 0 {
		return "", fmt.Errorf("tool_result: offset must be 0 or more, got %d", a.Offset)
	}
	if a.Limit < 0 || a.Limit > toolResultMaxPage {
		return "", fmt.Errorf("tool_result: limit must be between 1 and %d, got %d", toolResultMaxPage, a.Limit)
	}
	limit := a.Limit
	if limit == 0 {
		limit = toolResultPage
	}
	conv, ok := agent.ConversationFrom(ctx)
	if !ok {
		return "", errors.New("tool_result: no conversation to read (the tool runs only inside an agent's run)")
	}
	text, err := conv.ToolResult(a.ToolCallID)
	if err != nil {
		return "", fmt.Errorf("tool_result: %w", err)
	}
	if a.Offset > len(text) {
		return "", fmt.Errorf("tool_result: offset %d is past the end (%d bytes)", a.Offset, len(text))
	}
	return page(a.ToolCallID, text, a.Offset, limit), nil
}

// page renders text[offset:offset+limit], moved to rune boundaries (the
// start forward, the end back, never to an empty page while text is
// left), after a header that says where the next page starts.
func page(id, text string, offset, limit int) string {
	for offset < len(text) && !utf8.RuneStart(text[offset]) {
		offset++
	}
	end := min(offset+limit, len(text))
	for end > offset && end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == offset && offset < len(text) { // a limit smaller than one rune
		_, n := utf8.DecodeRuneInString(text[offset:])
		end = offset + n
	}
	sum := sha256.Sum256([]byte(text))
	complete := end == len(text)
	return fmt.Sprintf("tool_call_id: %s\noffset: %d\nnext_offset: %d\ntotal_bytes: %d\nsha256: %s\ncomplete: %t\n\n%s",
		id, offset, end, len(text), hex.EncodeToString(sum[:]), complete, text[offset:end])
}
