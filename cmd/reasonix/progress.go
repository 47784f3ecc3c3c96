package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"reasonix/agent"
)

// textPrinter streams the model's text to w as it arrives. A goal runs
// several turns; the text of a new turn starts on a fresh paragraph instead
// of running on from the previous turn's last sentence.
func textPrinter(w io.Writer) agent.Observer {
	var wrote, newTurn bool
	var last byte
	return func(e agent.Event) {
		switch e.Type {
		case agent.EventRunFinished:
			newTurn = wrote
		case agent.EventTextDelta:
			if e.Text == "" {
				return
			}
			if newTurn {
				sep := "\n"
				if last != '\n' {
					sep = "\n\n"
				}
				io.WriteString(w, sep)
				newTurn = false
			}
			io.WriteString(w, e.Text)
			wrote, last = true, e.Text[len(e.Text)-1]
		}
	}
}

// progress writes one diagnostic line per tool call to stderr, so stdout
// carries only the answer.
type progress struct {
	mu sync.Mutex
	w  *bufio.Writer
	st style
	// status is the run's status line on a terminal, nil elsewhere.
	status *liveStatus
	steps  int
	// refused is the last refused call, named in the summary of a blocked run.
	refused *agent.Event
}

func newProgress(w io.Writer) *progress {
	return &progress{w: bufio.NewWriter(w), st: styleFor(w), status: runStatus(w)}
}

func (p *progress) observe(e agent.Event) {
	var line string
	switch e.Type {
	case agent.EventUsage:
		p.mu.Lock()
		p.steps++
		step := fmt.Sprintf("step %d", p.steps)
		p.mu.Unlock()
		p.status.set(step)
		return
	case agent.EventRunFinished:
		p.status.pause()
		return
	case agent.EventToolStarted:
		line = fmt.Sprintf("· %s %s", e.Call.Name, callSubject(e.Call))
		p.mu.Lock()
		step := fmt.Sprintf("step %d · %s", max(p.steps, 1), truncate(line[len("· "):], 60))
		p.mu.Unlock()
		defer p.status.set(step)
	case agent.EventToolFinished:
		if e.IsError {
			line = p.st.red(fmt.Sprintf("✗ %s: %s", e.Call.Name, firstLine(e.Result)))
		}
	case agent.EventToolRefused:
		line = p.st.red(fmt.Sprintf("⊘ %s %s refused (%s)", e.Call.Name, callSubject(e.Call), e.Verdict.Code))
		p.mu.Lock()
		p.refused = &e
		p.mu.Unlock()
	case agent.EventRetry:
		line = "↻ " + e.Text
	case agent.EventContextCompacted:
		line = compactionLine(e.Compaction.Mode, e.Compaction.BeforeTokens, e.Compaction.AfterTokens, e.Compaction.Reason)
	case agent.EventPlanUpdated:
		var b strings.Builder
		b.WriteString("plan:")
		for _, it := range e.Plan {
			fmt.Fprintf(&b, "\n  [%s] %s", planMark(it.Status), it.Content)
			for _, st := range it.Steps {
				fmt.Fprintf(&b, "\n      [%s] %s", planMark(st.Status), st.Content)
			}
		}
		line = b.String()
	default:
		return
	}
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status != nil {
		p.status.println(line)
		return
	}
	fmt.Fprintln(p.w, line)
	p.w.Flush()
}

func (p *progress) summary(res agent.Result, transcript string) {
	p.status.pause()
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "reasonix: %s after %s, %s (%d refused), %d+%d tokens, %s\n",
		status(res.Outcome), plural(res.Steps, "step"), plural(res.ToolCalls, "tool call"), res.RefusedCalls,
		res.Usage.Prompt, res.Usage.Completion, res.Duration.Round(1e6))
	if res.Err != nil && res.Outcome != agent.OutcomeSucceeded {
		fmt.Fprintf(p.w, "reasonix: %s\n", errorSummary(res.Err))
	}
	if res.Outcome == agent.OutcomeBlocked && p.refused != nil && p.refused.Call != nil {
		code := "refused"
		if p.refused.Verdict != nil {
			code = p.refused.Verdict.Code
		}
		fmt.Fprintf(p.w, "reasonix: %s\n", refusalHint(p.refused.Call, code))
	}
	if transcript != "" {
		fmt.Fprintf(p.w, "reasonix: transcript %s\n", transcript)
	}
	p.w.Flush()
}

// refusalHint says which call a blocked run was refused and what would
// have allowed it.
func refusalHint(c *agent.ToolCall, code string) string {
	subject := callSubject(c)
	what := strings.TrimSpace(c.Name + " " + subject)
	if code == "deny_rule" {
		return fmt.Sprintf("blocked: %s was refused by a [permissions] deny rule; deny rules win under every posture", what)
	}
	rule := c.Name
	switch {
	case c.Name == "bash" && subject != "":
		rule = "Bash=" + subject
	case (c.Name == "write_file" || c.Name == "edit_file" || c.Name == "multi_edit") && subject != "":
		rule = "Edit(" + subject + ")"
	}
	return fmt.Sprintf("blocked: %s was refused (%s); rerun with --auto to allow ordinary writes in the workspace, or add an allow rule such as %q to [permissions] allow", what, code, rule)
}

// plural is "1 step", "2 steps".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// callSubject shows what a call acts on: its command, path or pattern.
func callSubject(c *agent.ToolCall) string {
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		return ""
	}
	for _, k := range []string{"command", "path", "file_path", "pattern"} {
		if s, ok := args[k].(string); ok {
			return truncate(firstLine(s), 120)
		}
	}
	return ""
}

func planMark(status string) string {
	switch status {
	case "completed":
		return "x"
	case "in_progress":
		return ">"
	default:
		return " "
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
