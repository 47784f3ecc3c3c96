package store_test

import (
	"context"
	"errors"
	"testing"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testWriteStep: a step's messages, journal start and events land
// together and numbered after what the task had; a step written for a
// conversation of another length, or for an unknown task, writes nothing;
// a second start of a call is reported and changes nothing else.
func testWriteStep(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("write step"), "")
	before, err := s.Events(ctx, task.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	asst := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{}`}}}
	res, err := s.WriteStep(ctx, task.ID, store.Step{After: 0,
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "go"}, asst},
		Start:    &store.JournalCall{CallID: "2/c1", Tool: "bash", ArgsHash: "h", Args: `{}`},
		Events:   []store.EventInput{{Type: "usage"}, {Type: "tool_started"}}})
	if err != nil || res.Seq != 2 || !res.Started {
		t.Fatalf("WriteStep(start) = %+v, %v; want seq 2, started", res, err)
	}
	if un, err := s.UnfinishedCalls(ctx, task.ID); err != nil || len(un) != 1 || un[0].CallID != "2/c1" {
		t.Fatalf("UnfinishedCalls = %+v, %v", un, err)
	}
	evs, err := s.Events(ctx, task.ID, 0, 0)
	if err != nil || len(evs) != len(before)+2 || evs[len(evs)-1].Type != "tool_started" || evs[len(evs)-1].Seq != int64(len(evs)) {
		t.Fatalf("Events = %+v, %v; want the step's two after %d", evs, err, len(before))
	}

	// Written for a conversation of another length: nothing lands.
	if _, err := s.WriteStep(ctx, task.ID, store.Step{After: 1, Messages: []agent.Message{{Role: agent.RoleTool, ToolCallID: "c1"}},
		Finish: []store.CallOutcome{{CallID: "2/c1", Result: "x"}}, Events: []store.EventInput{{Type: "lost"}}}); !errors.Is(err, store.ErrConversationMoved) {
		t.Fatalf("WriteStep(after 1) = %v; want ErrConversationMoved", err)
	}
	if _, err := s.WriteStep(ctx, "t_missing", store.Step{After: -1, Messages: []agent.Message{{Role: agent.RoleUser}}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("WriteStep(unknown task) = %v; want ErrNotFound", err)
	}
	if un, err := s.UnfinishedCalls(ctx, task.ID); err != nil || len(un) != 1 {
		t.Fatalf("after a refused step, UnfinishedCalls = %+v, %v; want 2/c1 still open", un, err)
	}

	// The tool message with the call's outcome; a second start of it is
	// reported, and the step's other writes still land.
	res, err = s.WriteStep(ctx, task.ID, store.Step{After: 2, Messages: []agent.Message{{Role: agent.RoleTool, ToolCallID: "c1", Content: "ok"}},
		Finish: []store.CallOutcome{{CallID: "2/c1", Result: "ok"}}, Start: &store.JournalCall{CallID: "2/c1", Tool: "bash"},
		Events: []store.EventInput{{Type: "tool_finished"}}})
	if err != nil || res.Seq != 3 || res.Started || len(res.Missed) != 0 {
		t.Fatalf("WriteStep(finish) = %+v, %v; want seq 3, not started again, none missed", res, err)
	}
	if un, err := s.UnfinishedCalls(ctx, task.ID); err != nil || len(un) != 0 {
		t.Fatalf("UnfinishedCalls = %+v, %v; want none", un, err)
	}
	msgs, err := s.Messages(ctx, task.ID)
	if err != nil || len(msgs) != 3 || msgs[2].Content != "ok" {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	evs, err = s.Events(ctx, task.ID, 0, 0)
	if err != nil || len(evs) != len(before)+3 || evs[len(evs)-1].Type != "tool_finished" {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	// A state change numbers its events after the step's.
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateCancelled,
		&store.StateOpts{Events: []store.EventInput{{Type: "task_state"}}}); err != nil {
		t.Fatal(err)
	}
	evs, err = s.Events(ctx, task.ID, 0, 0)
	if err != nil || len(evs) != len(before)+4 || evs[len(evs)-1].Seq != int64(len(evs)) {
		t.Fatalf("Events after a state change = %+v, %v", evs, err)
	}
}

// testWriteStepCarried: one step write carries the previous call's tool
// message and outcome with the next assistant message and its call's
// start (a run's steady state: one commit per step), and reports the
// task's control state — a message waiting in its inbox, a cancel
// request — as it found it.
func testWriteStepCarried(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("carried step"), "")
	call := func(id string) agent.Message {
		return agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: id, Name: "bash", Arguments: `{}`}}}
	}
	res, err := s.WriteStep(ctx, task.ID, store.Step{After: 0,
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "go"}, call("c1")},
		Start:    &store.JournalCall{CallID: "2/c1", Tool: "bash"}})
	if err != nil || res.Seq != 2 || !res.Started || res.Cancel || res.Inbox {
		t.Fatalf("first step = %+v, %v; want seq 2, started, no control state", res, err)
	}
	if _, err := s.PostMessage(ctx, task.ID, "alice", "also this"); err != nil {
		t.Fatal(err)
	}
	res, err = s.WriteStep(ctx, task.ID, store.Step{After: 2,
		Messages: []agent.Message{{Role: agent.RoleTool, ToolCallID: "c1", Content: "one"}, call("c2")},
		Finish:   []store.CallOutcome{{CallID: "2/c1", Result: "one"}},
		Start:    &store.JournalCall{CallID: "4/c2", Tool: "bash"},
		Events:   []store.EventInput{{Type: "tool_finished"}, {Type: "usage"}, {Type: "tool_started"}}})
	if err != nil || res.Seq != 4 || !res.Started || len(res.Missed) != 0 || !res.Inbox || res.Cancel {
		t.Fatalf("carried step = %+v, %v; want seq 4, started, none missed, the inbox seen", res, err)
	}
	j, err := s.Journal(ctx, task.ID)
	if err != nil || len(j) != 2 || j[0].FinishedAt.IsZero() || j[0].Result != "one" || !j[1].FinishedAt.IsZero() {
		t.Fatalf("Journal = %+v, %v; want 2/c1 finished with its result, 4/c2 open", j, err)
	}
	msgs, err := s.Messages(ctx, task.ID)
	if err != nil || len(msgs) != 4 || msgs[2].Content != "one" || len(msgs[3].ToolCalls) != 1 {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	if _, err := s.TakeInbox(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestCancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	res, err = s.WriteStep(ctx, task.ID, store.Step{After: 4,
		Messages: []agent.Message{{Role: agent.RoleTool, ToolCallID: "c2", Content: "two"}, {Role: agent.RoleAssistant, Content: "done"}},
		Finish:   []store.CallOutcome{{CallID: "4/c2", Result: "two"}}})
	if err != nil || res.Seq != 6 || !res.Cancel || res.Inbox {
		t.Fatalf("last step = %+v, %v; want seq 6, the cancel seen, the inbox empty", res, err)
	}
	if un, err := s.UnfinishedCalls(ctx, task.ID); err != nil || len(un) != 0 {
		t.Fatalf("UnfinishedCalls = %+v, %v; want none", un, err)
	}
}
