package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/agent"
)

func init() {
	agent.RegisterBuiltin("compress", func(agent.ToolEnv) agent.Tool { return compress{} })
}

// compress folds a range of the conversation the requester names into a
// digest checkpoint (seed §3.6), the way an automatic compaction folds the
// older part: the transcript keeps every message, only the model's view
// changes. It is the model's tool for "compress the context", never a
// habit: the description says to use it only when the requester asks.
type compress struct{}

// compress changes only what the model sees of the conversation, nothing
// outside the process: the tool contract marks it read-only.
var _ agent.ReadOnlyTool = compress{}

func (compress) Name() string   { return "compress" }
func (compress) ReadOnly() bool { return true }
func (compress) Description() string {
	return "Fold a range of this conversation into a summary checkpoint, to free context. The conversation's record keeps everything; " +
		"only what you see of the range becomes a digest. Use it only when the requester explicitly asks to compress the context. " +
		"from (and to) must be exact text that occurs once in one of the requester's real messages: the range starts at the message holding from " +
		"and ends with the exchange of the message holding to (without to: up to this call). The requester's messages and failing results keep their essentials verbatim."
}

func (compress) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "from": {"type": "string", "description": "Exact, unique text of the requester's message the range starts at."},
    "to": {"type": "string", "description": "Exact, unique text of the requester's message whose exchange ends the range; omit to fold up to this call."},
    "focus": {"type": "string", "description": "What the digest must keep, in a sentence (optional)."}
  },
  "required": ["from"],
  "additionalProperties": false
}`)
}

type compressArgs struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Focus string `json:"focus"`
}

// compressFocusMax bounds the focus the summarizer is given.
const compressFocusMax = 2000

func (compress) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a compressArgs
	if err := decodeArgs("compress", raw, &a, "from"); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.From) == "" {
		return "", errors.New("compress: from must be exact text of one of the requester's messages")
	}
	if len(a.Focus) > compressFocusMax {
		return "", fmt.Errorf("compress: focus is %d bytes; keep it under %d", len(a.Focus), compressFocusMax)
	}
	conv, ok := agent.ConversationFrom(ctx)
	if !ok {
		return "", errors.New("compress: no conversation to fold (the tool runs only inside an agent's run)")
	}
	c, err := conv.Fold(ctx, agent.FoldRequest{From: a.From, To: a.To, Focus: a.Focus})
	if err != nil {
		return "", fmt.Errorf("compress: %w", err)
	}
	if c.Mode == agent.CompactFailed {
		return "", fmt.Errorf("compress: nothing was folded: %s", c.Reason)
	}
	out := fmt.Sprintf("folded %d messages into a checkpoint (%s): the prompt went from about %d to about %d tokens",
		c.Folded, c.Mode, c.BeforeTokens, c.AfterTokens)
	if c.Warning != "" {
		out += "\nwarning: " + c.Warning
	}
	return out, nil
}
