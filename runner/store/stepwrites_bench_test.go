package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// stepRecords is what one bash step of a run stores: the assistant
// message asking for the call, the call's journal start, the process it
// started, the tool message with the call's outcome, and four events.
type stepRecords struct {
	asst, tool agent.Message
	key        string
	events     []store.EventInput
}

func newStepRecords(i int) stepRecords {
	id := fmt.Sprintf("c%d", i)
	ev := func(typ string) store.EventInput {
		return store.EventInput{Type: typ, Payload: json.RawMessage(`{"step":1,"call_id":"` + id + `"}`)}
	}
	return stepRecords{
		asst: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"echo hi >> progress.txt"}`}}},
		tool: agent.Message{Role: agent.RoleTool, ToolCallID: id, Content: "ok"},
		key:  fmt.Sprintf("%d/%s", 2*i+1, id),
		events: []store.EventInput{ev("usage"), ev("tool_started"), ev("tool_finished"),
			ev("message")},
	}
}

// BenchmarkStepWritesSeparate stores a step the way runs did before
// WriteStep: each record its own write (the events as one batch). It uses
// only methods today's and earlier stores both have, so the same
// benchmark runs against an earlier build.
func BenchmarkStepWritesSeparate(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b, store.Config{})
			task := benchTask(b, s)
			i := 0
			for b.Loop() {
				r := newStepRecords(i)
				i++
				if _, _, err := s.AppendMessagesFinishing(ctx, task.ID, nil, r.asst); err != nil {
					b.Fatal(err)
				}
				if err := s.JournalStart(ctx, task.ID, r.key, "bash", "h", r.asst.ToolCalls[0].Arguments); err != nil {
					b.Fatal(err)
				}
				if err := s.JournalProcess(ctx, task.ID, r.key, `{"pgid":1}`); err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.AppendMessagesFinishing(ctx, task.ID, []store.CallOutcome{{CallID: r.key, Result: "ok"}}, r.tool); err != nil {
					b.Fatal(err)
				}
				if _, err := s.AppendEvents(ctx, task.ID, r.events...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchTask(b *testing.B, s *store.Store) store.Task {
	task, _, err := s.CreateTask(context.Background(), newTask("steps"))
	if err != nil {
		b.Fatal(err)
	}
	return task
}
