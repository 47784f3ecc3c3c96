package main

import (
	"strings"
	"testing"

	"reasonix/runner/apitype"
)

// TestInstructionsUsedLine: `tasks show` names each instruction file the
// prompt held with its size (a cut one says so, a skipped one is left
// out) and the commit the repository's files were read at, not the
// commit of a directory's files handed with a tool result.
func TestInstructionsUsedLine(t *testing.T) {
	evs := []apitype.Event{
		{Type: "instructions", Payload: []byte(`{"commit":"feedfacecafebeef00001111","files":[
			{"scope":"user","path":"AGENTS.md","bytes":120},
			{"scope":"project","path":"REASONIX.md","bytes":33000,"truncated":true},
			{"scope":"project","path":"CLAUDE.md","bytes":0,"skipped":"AGENTS.md is there"}]}`)},
		{Type: "message", Payload: []byte(`{"role":"assistant","text":"hi"}`)},
		{Type: "instructions", Payload: []byte(`{"for":"pkg","commit":"0000000000000000","files":[{"scope":"project","path":"pkg/AGENTS.md","bytes":1500}]}`)},
	}
	u := instructionsUsed(evs)
	want := "user:AGENTS.md (120 B), REASONIX.md (33.0 KB, cut), pkg/AGENTS.md (1.5 KB) at commit feedfacecafe"
	if got := u.String(); got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	var b strings.Builder
	printTask(&b, apitype.Task{ID: "t_1", State: "succeeded"}, u)
	if !strings.Contains(b.String(), "instructions used  "+want+"\n") {
		t.Errorf("tasks show:\n%s", b.String())
	}
	b.Reset()
	printTask(&b, apitype.Task{ID: "t_1", State: "succeeded"}, instructionsUsed(nil))
	if strings.Contains(b.String(), "instructions used") {
		t.Errorf("a task without instruction files has the line:\n%s", b.String())
	}
}

// tasks show prints the task's delegation counters: "none" without a
// sub-agent, else the runs and every counter above 0 by its name.
func TestPrintTaskDelegationLine(t *testing.T) {
	for _, c := range []struct {
		d    *apitype.Delegation
		want string
	}{
		{&apitype.Delegation{}, "delegation none (no sub-agent ran)\n"},
		{&apitype.Delegation{SubagentRuns: 3, SubagentNestedRuns: 1, SubagentToolCalls: 9, FalseCompletions: 1},
			"delegation 3 sub-agents (1 nested), subagent_tool_calls 9, false_completions 1\n"},
	} {
		var b strings.Builder
		printTask(&b, apitype.Task{ID: "t_1", State: "succeeded", Result: &apitype.Result{Delegation: c.d}}, instructionsUsed(nil))
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("tasks show printed\n%s\nwant the line %q", b.String(), c.want)
		}
	}
	var b strings.Builder
	printTask(&b, apitype.Task{ID: "t_1", State: "succeeded", Result: &apitype.Result{}}, instructionsUsed(nil))
	if strings.Contains(b.String(), "delegation") {
		t.Errorf("a result without counters printed a delegation line:\n%s", b.String())
	}
}
