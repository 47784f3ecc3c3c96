package apitype_test

import (
	"encoding/json"
	"testing"
	"time"

	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// TestTerminalIsTheStoresRule: the client's idea of a finished task is
// the service's, state by state.
func TestTerminalIsTheStoresRule(t *testing.T) {
	for _, s := range []store.State{store.StateQueued, store.StateRunning, store.StateWaitingApproval, store.StateSucceeded,
		store.StateFailed, store.StateBlocked, store.StateCancelled, store.StateInterrupted, store.StateBudgetExhausted} {
		if got := apitype.TaskState(s).Terminal(); got != s.Terminal() {
			t.Errorf("%s: Terminal() = %v, the store says %v", s, got, s.Terminal())
		}
	}
}

func TestEndsTask(t *testing.T) {
	for _, tc := range []struct {
		typ, payload string
		want         bool
	}{
		{"task_state", `{"state":"succeeded"}`, true},
		{"task_state", `{"state":"interrupted","reason":"drain"}`, true},
		{"task_state", `{"state":"running"}`, false},
		{"task_state", `{}`, false},
		{"task_state", `not json`, false},
		{"final_report", `{"state":"succeeded"}`, false},
	} {
		ev := apitype.Event{Type: tc.typ, Payload: json.RawMessage(tc.payload)}
		if got := ev.EndsTask(); got != tc.want {
			t.Errorf("%s %s: EndsTask() = %v", tc.typ, tc.payload, got)
		}
	}
}

// TestRecordsKeepTheMapsBytes: answers that were once written from maps
// (whose keys encoding/json sorts) come out byte for byte as before.
func TestRecordsKeepTheMapsBytes(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		record, before any
	}{
		{apitype.Submitted{ID: "t_1", State: apitype.StateQueued, Created: true},
			map[string]any{"id": "t_1", "state": store.StateQueued, "created": true}},
		{apitype.TaskRef{ID: "t_1", State: apitype.StateCancelled}, map[string]any{"id": "t_1", "state": store.StateCancelled}},
		{apitype.TaskPage{Tasks: []apitype.Task{}, NextCursor: "c"}, map[string]any{"tasks": []any{}, "next_cursor": "c"}},
		{apitype.ScheduleRun{TaskID: "t_1", Task: apitype.Task{ID: "t_1", CreatedAt: now}},
			map[string]any{"task_id": "t_1", "task": apitype.Task{ID: "t_1", CreatedAt: now}}},
		{apitype.Status{Status: "ok"}, map[string]string{"status": "ok"}},
		{apitype.EventList{Events: []apitype.Event{}}, map[string]any{"events": []any{}}},
		{apitype.ApprovalList{Approvals: []apitype.Approval{}}, map[string]any{"approvals": []any{}}},
		{apitype.NodeList{Nodes: []apitype.Node{}}, map[string]any{"nodes": []any{}}},
	} {
		got, _ := json.Marshal(tc.record)
		want, _ := json.Marshal(tc.before)
		if string(got) != string(want) {
			t.Errorf("%T:\n got %s\nwant %s", tc.record, got, want)
		}
	}
}
