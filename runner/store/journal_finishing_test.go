package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testAppendFinishing: a tool message and its call's outcome are written
// together — the one-statement form (one message, one outcome) and the
// transaction (several of each) alike; an outcome without an unfinished
// entry is reported and changes nothing, and the message is still
// appended; an unknown task writes neither.
func testAppendFinishing(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("append finishing"), "")
	for _, c := range []string{"c1", "c2", "c3"} {
		if err := s.JournalStart(ctx, task.ID, c, "bash", "h", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	tool := func(id, text string) agent.Message {
		return agent.Message{Role: agent.RoleTool, ToolCallID: id, Content: text}
	}

	// One message, one outcome.
	seq, missed, err := s.AppendMessagesFinishing(ctx, task.ID,
		[]store.CallOutcome{{CallID: "c1", Result: "one", IsError: true}}, tool("c1", "one"))
	if err != nil || seq != 1 || len(missed) != 0 {
		t.Fatalf("AppendMessagesFinishing(c1) = %d, %v, %v; want 1, none missed", seq, missed, err)
	}
	// Several of each, and an outcome that finds its entry finished.
	seq, missed, err = s.AppendMessagesFinishing(ctx, task.ID, []store.CallOutcome{
		{CallID: "c2", Result: "two"}, {CallID: "c3", Result: "three"}, {CallID: "c1", Result: "again"},
	}, tool("c2", "two"), tool("c3", "three"))
	if err != nil || seq != 3 || !slices.Equal(missed, []string{"c1"}) {
		t.Fatalf("AppendMessagesFinishing(c2, c3, c1) = %d, %v, %v; want 3, c1 missed", seq, missed, err)
	}
	// One message whose outcome has no entry: reported, message kept.
	seq, missed, err = s.AppendMessagesFinishing(ctx, task.ID,
		[]store.CallOutcome{{CallID: "nope", Result: "x"}}, tool("nope", "x"))
	if err != nil || seq != 4 || !slices.Equal(missed, []string{"nope"}) {
		t.Fatalf("AppendMessagesFinishing(nope) = %d, %v, %v; want 4, nope missed", seq, missed, err)
	}

	entries, err := s.Journal(ctx, task.ID)
	if err != nil || len(entries) != 3 {
		t.Fatalf("Journal = %+v, %v", entries, err)
	}
	want := map[string]struct {
		result  string
		isError bool
	}{"c1": {"one", true}, "c2": {"two", false}, "c3": {"three", false}}
	for _, e := range entries {
		w := want[e.CallID]
		if e.FinishedAt.IsZero() || e.Result != w.result || e.IsError != w.isError {
			t.Errorf("journal %s = finished %v, %q, error %v; want %q, error %v", e.CallID, e.FinishedAt, e.Result, e.IsError, w.result, w.isError)
		}
	}
	msgs, err := s.Messages(ctx, task.ID)
	if err != nil || len(msgs) != 4 || msgs[0].Content != "one" || msgs[3].ToolCallID != "nope" {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}

	other := mustCreate(t, s, newTask("other"), "")
	if err := s.JournalStart(ctx, other.ID, "c1", "bash", "h", `{}`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AppendMessagesFinishing(ctx, "t_missing",
		[]store.CallOutcome{{CallID: "c1", Result: "x"}}, tool("c1", "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendMessagesFinishing(unknown task) = %v; want ErrNotFound", err)
	}
	if un, err := s.UnfinishedCalls(ctx, other.ID); err != nil || len(un) != 1 {
		t.Errorf("another task's entry = %+v, %v; want it untouched", un, err)
	}
}
