package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
)

const sessionsMaxLimit = 50

func init() {
	agent.RegisterBuiltin("list_sessions", func(env agent.ToolEnv) agent.Tool {
		if env.History == nil {
			return nil
		}
		return &listSessions{h: env.History}
	})
}

// listSessions lists the past tasks of the run's workspace its requester
// may see, newest first.
type listSessions struct{ h agent.History }

var _ agent.ReadOnlyTool = (*listSessions)(nil)

func (*listSessions) Name() string   { return "list_sessions" }
func (*listSessions) ReadOnly() bool { return true }
func (*listSessions) Description() string {
	return "List past tasks of this workspace (newest first): id, state, who asked and the start of the request. " +
		"Page with before set to the last id shown. Read one with read_session; search them with history."
}

func (*listSessions) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "before": {"type": "string", "description": "List tasks older than this task id (for the next page)."},
    "limit": {"type": "integer", "description": "At most this many tasks (default 20, at most 50)."}
  },
  "additionalProperties": false
}`)
}

func (t *listSessions) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Before string `json:"before"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs("list_sessions", raw, &a); err != nil {
		return "", err
	}
	limit, err := boundLimit("list_sessions", a.Limit, 20, sessionsMaxLimit)
	if err != nil {
		return "", err
	}
	got, err := t.h.Sessions(ctx, strings.TrimSpace(a.Before), limit)
	if err != nil {
		return "", fmt.Errorf("list_sessions: %w", err)
	}
	if len(got) == 0 {
		return "No past tasks.", nil
	}
	var b strings.Builder
	for _, s := range got {
		writeSessionLine(&b, s)
	}
	if len(got) == limit {
		fmt.Fprintf(&b, "(more may follow: before=%q)\n", got[len(got)-1].ID)
	}
	return b.String(), nil
}

func writeSessionLine(b *strings.Builder, s agent.SessionInfo) {
	fmt.Fprintf(b, "%s %s %s by %s: %s\n", s.ID, s.Created.UTC().Format("2006-01-02 15:04"), s.State, s.Requester, oneLine(s.Prompt, 160))
}

// oneLine flattens s to one line of at most n bytes (on a rune boundary).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
