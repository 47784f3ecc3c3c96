package agent

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The keep policy (seed §3.6): what a fold must not summarize away.
//
// Requester turns are held to a different standard than the work they
// govern: a constraint stated early ("do not change the public API")
// exists nowhere but the conversation, while the code it constrains can be
// read again. So the requester's turns in a folded stretch stay verbatim
// within a budget (one turn up to userTurn tokens, all up to userTurns,
// oldest first), and a turn that starts with KeepMarker stays regardless
// of its own size, within a budget of its own (15% of the window, newest
// first). A kept turn rides into every later fold, which is why even
// marked turns are bounded: an unbounded mark would grow what each fold
// carries until no candidate could land under the trigger.
//
// A failed tool result keeps only its failure-carrying lines: the test
// name and the assertion that failed are what the next step needs, and a
// summarizer paraphrasing them is how an agent "fixes" the wrong thing.

// KeepMarker, at the start of a requester's message, keeps that message
// verbatim through every compaction (keep policy user_marked).
const KeepMarker = "[[keep]]"

// keepMarked reports whether a requester's message asks to be kept.
func keepMarked(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), KeepMarker)
}

// keepTurns chooses the requester turns a fold keeps verbatim, in their
// order, and counts the ones left to the digest. task is pinned on its own.
func keepTurns(b budgets, task string, turns []string) (kept []string, dropped int) {
	seen := map[string]bool{task: true}
	var uniq []string
	for _, t := range turns {
		if !seen[t] { // the task itself, or a turn repeated word for word
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	keep := make([]bool, len(uniq))
	markedSpent := 0
	for i := len(uniq) - 1; i >= 0; i-- { // marked: newest first
		if !keepMarked(uniq[i]) {
			continue
		}
		if n := estimateText(uniq[i]); markedSpent+n <= b.marked {
			markedSpent += n
			keep[i] = true
		}
	}
	total := 0
	for i, t := range uniq { // the rest: oldest first
		if keepMarked(t) {
			continue
		}
		if n := estimateText(t); n <= b.userTurn && total+n <= b.userTurns {
			total += n
			keep[i] = true
		}
	}
	for i, t := range uniq {
		if keep[i] {
			kept = append(kept, t)
		} else {
			dropped++
		}
	}
	return kept, dropped
}

// failureLine matches the lines of a failed result that carry the failure.
var failureLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\berror\b|\bfail(ed|ure|s)?\b|--- FAIL|\bpanic\b|\bfatal\b|\bexception\b|\bundefined\b|\bcannot\b|\bdenied\b|\bnot found\b|^exit code: )`)
})

// Bounds of what one failed result keeps.
const (
	failureLinesPerResult = 20
	failureLineBytes      = 300
)

// failedResult reports whether m is the result of a call that failed, by
// the host's own record of it: an error the tool returned (execute.go
// writes it as a last "error: " line) or a command's non-zero exit code
// (bash's last line). The command's output is never trusted for this: a
// real `go test` log opens with "=== RUN", and no prefix match sees it.
func failedResult(m *Message) bool {
	if m.Role != RoleTool {
		return false
	}
	text := m.Content
	if m.RawContent != "" {
		text = m.RawContent
	}
	text = strings.TrimRight(text, "\n")
	last := text[strings.LastIndexByte(text, '\n')+1:]
	if strings.HasPrefix(text, toolErrorPrefix) || strings.HasPrefix(last, toolErrorPrefix) {
		return true
	}
	if code, ok := strings.CutPrefix(last, "exit code: "); ok {
		code, _, _ = strings.Cut(code, " ")
		n, err := strconv.Atoi(code)
		return err == nil && n != 0
	}
	return false
}

// failureLines is the failure-carrying part of a failed result: its
// matching lines, bounded, under one "tool:" heading; "" when m did not
// fail or no line matches.
func failureLines(m *Message) string {
	if !failedResult(m) {
		return ""
	}
	text := m.Content
	if m.RawContent != "" {
		text = m.RawContent
	}
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		if !failureLine().MatchString(line) {
			continue
		}
		if len(line) > failureLineBytes {
			line = validPrefix(line[:failureLineBytes]) + "…"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > failureLinesPerResult { // the first lines name the failure, the last its summary
		lines = append(append(lines[:failureLinesPerResult/2:failureLinesPerResult/2], "…"), lines[len(lines)-failureLinesPerResult/2:]...)
	}
	return m.Name + ":\n" + strings.Join(lines, "\n")
}

// keepFailures is what a fold keeps of failures: those the digest in
// force kept and those of the folded messages, newest first within the
// budget, returned oldest first.
func keepFailures(b budgets, prior []string, fold []Message) []string {
	all := append([]string(nil), prior...)
	for i := range fold {
		if f := failureLines(&fold[i]); f != "" {
			all = append(all, f)
		}
	}
	spent, from := 0, len(all)
	for from > 0 {
		n := estimateText(all[from-1])
		if spent+n > b.failures {
			break
		}
		spent += n
		from--
	}
	if from == len(all) {
		return nil
	}
	return all[from:]
}
