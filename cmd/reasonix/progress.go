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

// textPrinter streams the model's text to w as it arrives.
func textPrinter(w io.Writer) agent.Observer {
	return func(e agent.Event) {
		if e.Type == agent.EventTextDelta {
			io.WriteString(w, e.Text)
		}
	}
}

// progress writes one diagnostic line per tool call to stderr, so stdout
// carries only the answer.
type progress struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newProgress(w io.Writer) *progress { return &progress{w: bufio.NewWriter(w)} }

func (p *progress) observe(e agent.Event) {
	var line string
	switch e.Type {
	case agent.EventToolStarted:
		line = fmt.Sprintf("· %s %s", e.Call.Name, callSubject(e.Call))
	case agent.EventToolFinished:
		if e.IsError {
			line = fmt.Sprintf("✗ %s: %s", e.Call.Name, firstLine(e.Result))
		}
	case agent.EventToolRefused:
		line = fmt.Sprintf("⊘ %s %s refused (%s)", e.Call.Name, callSubject(e.Call), e.Verdict.Code)
	case agent.EventRetry:
		line = "↻ " + e.Text
	case agent.EventPlanUpdated:
		var b strings.Builder
		b.WriteString("plan:")
		for _, it := range e.Plan {
			fmt.Fprintf(&b, "\n  [%s] %s", planMark(it.Status), it.Content)
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
	fmt.Fprintln(p.w, line)
	p.w.Flush()
}

func (p *progress) summary(res agent.Result, transcript string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "reasonix: %s after %d steps, %d tool calls (%d refused), %d+%d tokens, %s\n",
		status(res.Outcome), res.Steps, res.ToolCalls, res.RefusedCalls,
		res.Usage.Prompt, res.Usage.Completion, res.Duration.Round(1e6))
	if res.Err != nil && res.Outcome != agent.OutcomeSucceeded {
		fmt.Fprintf(p.w, "reasonix: %s\n", errorSummary(res.Err))
	}
	if transcript != "" {
		fmt.Fprintf(p.w, "reasonix: transcript %s\n", transcript)
	}
	p.w.Flush()
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
