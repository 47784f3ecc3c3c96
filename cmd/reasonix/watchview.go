package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"reasonix/agent"
)

// watchView prints a task's events for a person following it: one line per
// event, an approval request with its preview and the commands that decide
// it, and on a terminal a status line with the elapsed time and the step.
type watchView struct {
	st     style
	status *liveStatus
	steps  int
}

func newWatchView(w io.Writer) *watchView {
	st := styleFor(w)
	return &watchView{st: st, status: newLiveStatus(w, st, isTerminal(w))}
}

func (v *watchView) close() { v.status.close() }

// show prints one event and updates the status line.
func (v *watchView) show(ev streamEvent) {
	var p map[string]any
	_ = json.Unmarshal(ev.Payload, &p)
	str := func(k string) string { s, _ := p[k].(string); return s }
	st := v.st
	switch ev.Type {
	case "task_state":
		v.status.println("state: " + str("state"))
		v.status.set(str("state"))
	case "message":
		if line := truncate(firstLine(str("text")), 200); line != "" {
			v.status.println(line)
		}
	case "usage":
		if str("subagent") == "" {
			v.steps++
			v.status.set(fmt.Sprintf("step %d", v.steps))
		}
	case "tool_started":
		what := str("tool") + " " + callSubject(&agent.ToolCall{Arguments: str("args")})
		v.status.println("· " + what)
		v.status.set(fmt.Sprintf("step %d · %s", v.steps, truncate(what, 60)))
	case "tool_refused":
		v.status.println(st.red(fmt.Sprintf("⊘ %s refused (%s)", str("tool"), str("code"))))
	case "approval_requested":
		id := str("approval_id")
		v.status.println(st.yellow(fmt.Sprintf("? approval %s: %s %s", id, str("tool"), truncate(firstLine(str("subject")), 100))))
		if preview := cmpString(str("preview"), str("subject")); preview != "" {
			var b strings.Builder
			printPreview(&b, st, "    ", preview)
			v.status.println(strings.TrimRight(b.String(), "\n"))
		}
		v.status.println(fmt.Sprintf("  decide: reasonix approvals allow %s   or   reasonix approvals deny %s --note WHY", id, id))
		v.status.set("waiting for approval " + id)
	case "approval_decided":
		v.status.println(fmt.Sprintf("  %s by %s", str("decision"), str("approver")))
	case "context_compacted":
		num := func(k string) int { f, _ := p[k].(float64); return int(f) }
		v.status.println(compactionLine(str("mode"), num("before_tokens"), num("after_tokens"), str("reason")))
	case "question":
		v.status.println(st.yellow("? question: " + str("question")))
	case "final_report":
		v.status.println("report: " + truncate(firstLine(str("summary")), 200))
		if why := str("reason"); why != "" {
			v.status.println("why: " + why)
		}
	}
}

// compactionLine is how a person reads a context_compacted event, in
// `run`'s progress and in `tasks watch` alike.
func compactionLine(mode string, before, after int, reason string) string {
	line := fmt.Sprintf("⇣ context compacted (%s): ~%d → ~%d tokens", mode, before, after)
	if mode == agent.CompactFailed {
		line = fmt.Sprintf("⇣ context compaction failed at ~%d tokens", before)
	}
	if reason != "" {
		line += ": " + truncate(reason, 200)
	}
	return line
}
