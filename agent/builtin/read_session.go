package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

// A window of a past transcript: a few messages, each cut, so reading a
// session cannot flood the conversation.
const (
	readSessionMaxLimit = 50
	readSessionMaxChars = 2000
)

func init() {
	agent.RegisterBuiltin("read_session", func(env agent.ToolEnv) agent.Tool {
		if env.History == nil {
			return nil
		}
		return &readSession{h: env.History}
	})
}

// readSession reads a window of a past task's transcript.
type readSession struct{ h agent.History }

var _ agent.ReadOnlyTool = (*readSession)(nil)

func (*readSession) Name() string   { return "read_session" }
func (*readSession) ReadOnly() bool { return true }
func (*readSession) Description() string {
	return "Read the conversation of a past task of this workspace (an id from list_sessions or history), a window of messages at a time: " +
		"offset is the first message (0-based), limit how many. Long messages are cut; page on with a larger offset."
}

func (*readSession) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "The past task's id."},
    "offset": {"type": "integer", "description": "The first message to show, 0-based (default 0)."},
    "limit": {"type": "integer", "description": "At most this many messages (default 20, at most 50)."}
  },
  "required": ["id"],
  "additionalProperties": false
}`)
}

func (t *readSession) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		ID     string `json:"id"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs("read_session", raw, &a, "id"); err != nil {
		return "", err
	}
	if a.Offset < 0 {
		return "", fmt.Errorf("read_session: offset must not be negative, got %d", a.Offset)
	}
	limit, err := boundLimit("read_session", a.Limit, 20, readSessionMaxLimit)
	if err != nil {
		return "", err
	}
	st, err := t.h.Session(ctx, strings.TrimSpace(a.ID), a.Offset, limit)
	if err != nil {
		return "", fmt.Errorf("read_session: %w", err)
	}
	var b strings.Builder
	writeSessionLine(&b, st.Info)
	fmt.Fprintf(&b, "messages %d–%d of %d\n", a.Offset, a.Offset+len(st.Messages), st.Total)
	for i, m := range st.Messages {
		fmt.Fprintf(&b, "\n[%d %s]", a.Offset+i, m.Role)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, " call %s(%s)", c.Name, oneLine(c.Arguments, 200))
		}
		if m.Content != "" {
			b.WriteString("\n" + agent.BoundResult(m.Content, readSessionMaxChars))
		}
		b.WriteString("\n")
	}
	if next := a.Offset + len(st.Messages); next < st.Total {
		fmt.Fprintf(&b, "\n(more: offset=%d)\n", next)
	}
	return b.String(), nil
}
