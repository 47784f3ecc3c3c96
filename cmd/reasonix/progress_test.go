package main

import (
	"bytes"
	"strings"
	"testing"

	"reasonix/agent"
)

func TestGoalTurnsStartOnAFreshParagraph(t *testing.T) {
	var buf bytes.Buffer
	p := textPrinter(&buf)
	for _, e := range []agent.Event{
		{Type: agent.EventTextDelta, Text: "Looking at the "},
		{Type: agent.EventTextDelta, Text: "tests."},
		{Type: agent.EventRunFinished},
		{Type: agent.EventRunFinished}, // a turn with only tool calls
		{Type: agent.EventTextDelta, Text: "Fixed.\n"},
		{Type: agent.EventRunFinished},
		{Type: agent.EventTextDelta, Text: "Done."},
	} {
		p(e)
	}
	if got, want := buf.String(), "Looking at the tests.\n\nFixed.\n\nDone."; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	buf.Reset()
	p = textPrinter(&buf)
	p(agent.Event{Type: agent.EventTextDelta, Text: "one turn"})
	p(agent.Event{Type: agent.EventRunFinished})
	if buf.String() != "one turn" {
		t.Errorf("a single run printed %q: the run's own closing newline is runCommand's", buf.String())
	}
}

func TestBlockedRunSummaryNamesTheCallAndTheWayOut(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.observe(agent.Event{Type: agent.EventToolRefused, Call: &agent.ToolCall{Name: "bash", Arguments: `{"command":"make deploy"}`},
		Verdict: &agent.Verdict{Code: "unattended"}})
	p.summary(agent.Result{Outcome: agent.OutcomeBlocked, Steps: 1, ToolCalls: 1, RefusedCalls: 1}, "")
	out := buf.String()
	for _, want := range []string{"⊘ bash make deploy refused (unattended)", "reasonix: blocked after 1 step, 1 tool call (1 refused)",
		"blocked: bash make deploy was refused (unattended); rerun with --auto", `"Bash=make deploy" to [permissions] allow`} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if got := refusalHint(&agent.ToolCall{Name: "write_file", Arguments: `{"path":".env"}`}, "deny_rule"); strings.Contains(got, "--auto") || !strings.Contains(got, "deny rule") {
		t.Errorf("a deny rule cannot be lifted by --auto: %q", got)
	}
	if got := refusalHint(&agent.ToolCall{Name: "edit_file", Arguments: `{"path":"a.go"}`}, "unattended"); !strings.Contains(got, `"Edit(a.go)"`) {
		t.Errorf("edit hint: %q", got)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 steps", 1: "1 step", 2: "2 steps"} {
		if got := plural(n, "step"); got != want {
			t.Errorf("plural(%d) = %q", n, got)
		}
	}
}
