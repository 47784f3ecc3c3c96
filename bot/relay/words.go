package relay

import (
	"strings"

	"reasonix/runner/store"
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
func stateWords(s store.State) string {
	switch s {
	case store.StateQueued:
		return "queued"
	case store.StateRunning:
		return "running"
	case store.StateWaitingApproval:
		return "waiting for approval"
	case store.StateSucceeded:
		return "done"
	case store.StateBudgetExhausted:
		return "out of budget"
	}
	return string(s)
}

// stateIcon is the status line's marker.
func stateIcon(s store.State) string {
	switch s {
	case store.StateQueued:
		return "⏳"
	case store.StateRunning:
		return "▶"
	case store.StateWaitingApproval:
		return "✋"
	case store.StateSucceeded:
		return "✅"
	case store.StateCancelled:
		return "⏹"
	}
	return "⚠️"
}
