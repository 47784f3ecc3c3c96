package execute

import (
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner/store"
)

// TestSettleAnswersFromTheJournal: of the calls the last assistant message
// made and nothing answered, a finished one gets its recorded result, an
// unfinished writer the unknown outcome, and an unfinished reader or a
// call never started is left to run again; answered calls are not
// pending at all.
func TestSettleAnswersFromTheJournal(t *testing.T) {
	calls := []agent.ToolCall{{ID: "a", Name: "write_file"}, {ID: "b", Name: "bash"}, {ID: "c", Name: "read_file"},
		{ID: "d", Name: "write_file"}, {ID: "e", Name: "write_file"}}
	history := []agent.Message{
		{Role: agent.RoleUser, Content: "go"},
		{Role: agent.RoleAssistant, ToolCalls: calls},
		{Role: agent.RoleTool, ToolCallID: "e", Content: "done"},
	}
	seq, pending := PendingCalls(history)
	if seq != 2 || len(pending) != 4 {
		t.Fatalf("PendingCalls = %d, %v; want seq 2 and calls a-d", seq, pending)
	}
	finished := time.Unix(100, 0)
	entries := []store.JournalEntry{
		{CallID: JournalKey(2, "a"), Tool: "write_file", Result: "wrote it", FinishedAt: finished},
		{CallID: JournalKey(2, "b"), Tool: "bash"},
		{CallID: JournalKey(2, "c"), Tool: "read_file"},
		{CallID: JournalKey(1, "d"), Tool: "write_file"}, // an earlier turn's call of the same id
	}
	got := Settle(seq, pending, entries, func(tool string) bool { return tool == "read_file" })
	if len(got) != 2 {
		t.Fatalf("settled %+v; want a and b", got)
	}
	if got[0].Call.ID != "a" || got[0].Content != "wrote it" || got[0].Unknown {
		t.Errorf("finished call: %+v", got[0])
	}
	if got[1].Call.ID != "b" || got[1].Content != UnknownOutcome || !got[1].Unknown || got[1].Key != "2/b" {
		t.Errorf("unfinished writer: %+v", got[1])
	}
}

// TestPendingCallsNeedsAnAssistantLast: a conversation that ends with the
// user (or is empty) has nothing to settle.
func TestPendingCallsNeedsAnAssistantLast(t *testing.T) {
	for _, h := range [][]agent.Message{nil, {{Role: agent.RoleUser, Content: "hi"}}} {
		if seq, p := PendingCalls(h); seq != 0 || p != nil {
			t.Errorf("PendingCalls(%v) = %d, %v", h, seq, p)
		}
	}
}

// TestArgsHashIgnoresKeyOrderAndSpace: the same arguments hash alike
// however the model spaced and ordered them.
func TestArgsHashIgnoresKeyOrderAndSpace(t *testing.T) {
	if ArgsHash([]byte(`{"b":1, "a":"x"}`)) != ArgsHash([]byte(`{"a":"x","b":1}`)) {
		t.Error("key order or space changed the hash")
	}
	if ArgsHash([]byte(`{"a":"x"}`)) == ArgsHash([]byte(`{"a":"y"}`)) {
		t.Error("different arguments hashed alike")
	}
}
