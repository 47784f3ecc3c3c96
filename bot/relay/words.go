package relay

import (
	"strings"

	"reasonix/runner"
)

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// firstLine is the first line of s, at most n runes.
func firstLine(s string, n int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > n {
		return string(r[:n]) + "…"
	}
	return line
}

// stateWords says a task state the way a person would.
func stateWords(s runner.State) string {
	switch s {
	case runner.StateQueued:
		return "queued"
	case runner.StateRunning:
		return "running"
	case runner.StateWaitingApproval:
		return "waiting for approval"
	case runner.StateWaitingCI:
		return "waiting for CI"
	case runner.StateSucceeded:
		return "done"
	case runner.StateBudgetExhausted:
		return "out of budget"
	}
	return string(s)
}

// stateIcon is the status line's marker.
func stateIcon(s runner.State) string {
	switch s {
	case runner.StateQueued:
		return "⏳"
	case runner.StateRunning:
		return "▶"
	case runner.StateWaitingApproval:
		return "✋"
	case runner.StateWaitingCI:
		return "⏳"
	case runner.StateSucceeded:
		return "✅"
	case runner.StateCancelled:
		return "⏹"
	}
	return "⚠️"
}
