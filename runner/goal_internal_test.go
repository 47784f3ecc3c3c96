package runner

import (
	"testing"

	"reasonix/agent"
	"reasonix/goals"
)

// A goal whose run stopped mid-turn continues that turn from the
// transcript, which is saved message by message; a transcript that is not
// the goal's conversation is ignored.
func TestAdoptTranscript(t *testing.T) {
	user := agent.Message{Role: agent.RoleUser, Content: "<goal>"}
	asst := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "write_file"}}}
	result := agent.Message{Role: agent.RoleTool, ToolCallID: "c1", Content: "ok"}

	st := &goals.State{History: []agent.Message{user}}
	adoptTranscript(st, []agent.Message{user, asst, result})
	if len(st.History) != 3 || !st.Suspended {
		t.Fatalf("ahead transcript: history %d suspended %v", len(st.History), st.Suspended)
	}

	st = &goals.State{History: []agent.Message{user, asst, result}}
	adoptTranscript(st, []agent.Message{user})
	if len(st.History) != 3 || st.Suspended {
		t.Fatalf("behind transcript: history %d suspended %v", len(st.History), st.Suspended)
	}

	st = &goals.State{History: []agent.Message{user}}
	adoptTranscript(st, []agent.Message{{Role: agent.RoleUser, Content: "other"}, asst})
	if len(st.History) != 1 || st.Suspended {
		t.Fatalf("foreign transcript: history %d suspended %v", len(st.History), st.Suspended)
	}
}
