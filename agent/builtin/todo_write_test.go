package builtin

import (
	"reflect"
	"strings"
	"testing"

	"reasonix/agent"
)

func TestTodoWriteEmitsPlan(t *testing.T) {
	env, _ := testEnv(t)
	var events []agent.Event
	env.Emit = func(e agent.Event) { events = append(events, e) }
	tw := tool(t, env, "todo_write")
	got := mustCall(t, tw, map[string]any{"todos": []map[string]string{
		{"content": "read the code", "status": "completed"},
		{"content": " fix the bug ", "status": "in_progress"},
		{"content": "run the tests", "status": "pending"},
	}})
	want := "plan updated: 1 of 3 done\n[x] read the code\n[>] fix the bug\n[ ] run the tests"
	if got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	wantPlan := []agent.TodoItem{
		{Content: "read the code", Status: "completed"},
		{Content: "fix the bug", Status: "in_progress"},
		{Content: "run the tests", Status: "pending"},
	}
	if len(events) != 1 || events[0].Type != agent.EventPlanUpdated || !reflect.DeepEqual(events[0].Plan, wantPlan) {
		t.Fatalf("events = %+v", events)
	}
	// The whole plan is replaced, and may be cleared.
	if got := mustCall(t, tw, `{"todos":[]}`); got != "plan cleared" {
		t.Errorf("clear = %q", got)
	}
	if len(events) != 2 || len(events[1].Plan) != 0 {
		t.Errorf("clear events = %+v", events)
	}
}

func TestTodoWriteRejectsBadPlans(t *testing.T) {
	env, _ := testEnv(t)
	emitted := 0
	env.Emit = func(agent.Event) { emitted++ }
	tw := tool(t, env, "todo_write")
	wantErr(t, tw, map[string]any{"todos": []map[string]string{
		{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"},
	}}, "2 items are in_progress", "at most one")
	wantErr(t, tw, map[string]any{"todos": []map[string]string{{"content": "  ", "status": "pending"}}}, "todos[0]", "content must not be empty")
	wantErr(t, tw, map[string]any{"todos": []map[string]string{{"content": strings.Repeat("x", 600), "status": "pending"}}}, "todos[0]", "under 500")
	if emitted != 0 {
		t.Errorf("a rejected plan was emitted %d times", emitted)
	}
	// Without Emit the tool still answers.
	env.Emit = nil
	if got := mustCall(t, tool(t, env, "todo_write"), `{"todos":[{"content":"a","status":"pending"}]}`); !strings.Contains(got, "[ ] a") {
		t.Errorf("no-emit result %q", got)
	}
}

// A plan may have phases with sub-steps, one level deep; the flat form
// above stays valid.
func TestTodoWriteTwoLevels(t *testing.T) {
	env, _ := testEnv(t)
	var events []agent.Event
	env.Emit = func(e agent.Event) { events = append(events, e) }
	tw := tool(t, env, "todo_write")
	got := mustCall(t, tw, `{"todos":[
		{"content":"understand","status":"completed","steps":[{"content":"read the code","status":"completed"}]},
		{"content":"fix","status":"in_progress","steps":[{"content":"write the test","status":"completed"},{"content":"change parse","status":"in_progress"},{"content":"run go test","status":"pending"}]},
		{"content":"ship","status":"pending"}]}`)
	want := "plan updated: 1 of 3 done\n[x] understand\n    [x] read the code\n[>] fix\n    [x] write the test\n    [>] change parse\n    [ ] run go test\n[ ] ship"
	if got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	wantPlan := []agent.TodoItem{
		{Content: "understand", Status: "completed", Steps: []agent.TodoItem{{Content: "read the code", Status: "completed"}}},
		{Content: "fix", Status: "in_progress", Steps: []agent.TodoItem{{Content: "write the test", Status: "completed"},
			{Content: "change parse", Status: "in_progress"}, {Content: "run go test", Status: "pending"}}},
		{Content: "ship", Status: "pending"},
	}
	if len(events) != 1 || !reflect.DeepEqual(events[0].Plan, wantPlan) {
		t.Fatalf("events %+v", events)
	}
	for _, bad := range []struct{ args, want string }{
		{`{"todos":[{"content":"p","status":"in_progress","steps":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}]}`, "at most one step"},
		{`{"todos":[{"content":"p","status":"pending","steps":[{"content":"a","status":"in_progress"}]}]}`, "phase must be in_progress"},
		{`{"todos":[{"content":"p","status":"completed","steps":[{"content":"a","status":"pending"}]}]}`, "1 of its steps are not"},
		{`{"todos":[{"content":"p","status":"pending","steps":[{"content":"a","status":"pending","steps":[]}]}]}`, "unknown argument"},
		{`{"todos":[{"content":"p","status":"pending","steps":[{"content":" ","status":"pending"}]}]}`, "todos[0].steps[0]: content must not be empty"},
		{`{"todos":[{"content":"p","status":"pending","steps":[{"content":"a","status":"done"}]}]}`, "status must be"},
	} {
		wantErr(t, tw, bad.args, bad.want)
	}
	if len(events) != 1 {
		t.Errorf("a rejected plan was emitted")
	}
}
