package policy

import (
	"encoding/json"
	"testing"

	"reasonix/agent"
)

func TestHumanOnlyCall(t *testing.T) {
	entries := []string{"forget", "remember(scope=user)"}
	for _, c := range []struct {
		tool, args string
		want       bool
	}{
		{"forget", `{"id":"m1"}`, true},
		{"remember", `{"text":"x","scope":"user"}`, true},
		{"remember", `{"text":"x","scope":"workspace"}`, false},
		{"remember", `{"text":"x"}`, false},
		{"remember", `{"text":"x","scope":7}`, true}, // unreadable: fail closed
		{"remember", `not json`, true},
		{"write_file", `{"scope":"user"}`, false},
	} {
		if got := humanOnlyCall(entries, agent.Call{Tool: c.tool, Args: json.RawMessage(c.args)}); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.tool, c.args, got, c.want)
		}
	}
}
