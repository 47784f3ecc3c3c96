package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"reasonix/agent"
)

func TestColourOnlyOnATerminalWithoutNoColor(t *testing.T) {
	if styleFor(&bytes.Buffer{}).color {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || styleFor(f).color {
		t.Error("a regular file is not a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		t.Setenv("NO_COLOR", "")
		if !isTerminal(tty) || !styleFor(tty).color {
			t.Error("/dev/tty should be a terminal with colour")
		}
		t.Setenv("NO_COLOR", "1")
		if styleFor(tty).color {
			t.Error("NO_COLOR=1 must turn colour off")
		}
	}
	if got := (style{}).red("x"); got != "x" {
		t.Errorf("plain style decorated %q", got)
	}
	if got := (style{color: true}).red("x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("colour style wrote %q", got)
	}
}

func TestLiveStatusStaysBelowTheLines(t *testing.T) {
	var buf lockedBuffer
	l := newLiveStatus(&buf, style{}, true)
	l.set("step 1")
	l.println("state: running")
	l.set("step 2 · bash go test")
	l.close()
	out := buf.String()
	// Each redraw first clears the status line; the printed line survives
	// whole and the status line is gone at the end.
	if !strings.Contains(out, "\r\x1b[Kstate: running\n") || !strings.Contains(out, "step 2 · bash go test") {
		t.Errorf("status output %q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the status line was not cleared at the end: %q", out)
	}
	if !strings.Contains(out, "0s · step 1") {
		t.Errorf("the status line lacks the elapsed time: %q", out)
	}

	var plain bytes.Buffer
	l = newLiveStatus(&plain, style{}, false)
	l.set("step 1")
	l.println("state: running")
	l.close()
	if plain.String() != "state: running\n" {
		t.Errorf("off a terminal the status wrote %q", plain.String())
	}
}

func TestRunStatusLineFollowsStepsAndPausesBetweenTurns(t *testing.T) {
	var buf lockedBuffer
	p := newProgress(&buf)
	if p.status != nil {
		t.Fatal("a buffer got a status line")
	}
	p.status = newLiveStatus(&buf, style{}, true) // as on a terminal
	p.observe(agent.Event{Type: agent.EventUsage, Usage: &agent.Usage{}})
	p.observe(agent.Event{Type: agent.EventToolStarted, Call: &agent.ToolCall{Name: "bash", Arguments: `{"command":"go test ./..."}`}})
	p.observe(agent.Event{Type: agent.EventRunFinished})
	mark := len(buf.String())
	p.summary(agent.Result{Outcome: agent.OutcomeSucceeded, Steps: 1}, "")
	p.status.close()
	out := buf.String()
	for _, want := range []string{"0s · step 1", "\r\x1b[K· bash go test ./...\n", "0s · step 1 · bash go test ./..."} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q: %q", want, out)
		}
	}
	if tail := out[mark:]; strings.Contains(tail, "\r") || !strings.HasPrefix(tail, "reasonix: succeeded after 1 step") {
		t.Errorf("after the turn ended the status line came back: %q", tail)
	}
}
