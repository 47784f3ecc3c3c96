package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/runner/store"
)

// MaxLostListed bounds how many lost calls a note names one by one.
const MaxLostListed = 40

// LostCalls names the journaled calls of entries (those not checkpointed)
// whose changes a workspace restored from its last checkpoint lacks, by
// their tool and the arguments that say what they changed. readOnly
// reports a tool that changes nothing; a tool it does not know must count
// as a writer: saying too much is safe here.
func LostCalls(entries []store.JournalEntry, readOnly func(tool string) bool) []string {
	var lost []string
	for _, e := range entries {
		if readOnly(e.Tool) {
			continue
		}
		lost = append(lost, describeCall(e))
	}
	return lost
}

// LostNote is what a continuation in a workspace restored from branch is
// told about the calls lost (LostCalls, at least one): which calls'
// effects are missing although the transcript says they succeeded, so the
// model redoes what it still needs. It is not redacted.
func LostNote(branch string, lost []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Note from Reasonix, not from the requester: this task continues in a workspace restored from its last checkpoint "+
		"(branch %s as last committed); the run before stopped without saving its later changes (its node stopped, or the "+
		"worktree was lost). Whatever these %d earlier tool calls changed in the workspace is NOT there now, although the "+
		"conversation above reports them as done:\n", branch, len(lost))
	for _, l := range lost[:min(len(lost), MaxLostListed)] {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	if n := len(lost) - MaxLostListed; n > 0 {
		fmt.Fprintf(&b, "- and %d more\n", n)
	}
	b.WriteString("Check the workspace and redo what the task still needs before you go on; do not assume those files or changes exist.")
	return b.String()
}

// describeCall names a journaled call by its tool and the arguments that
// say what it changed (a path, a command); the content written is left
// out.
func describeCall(e store.JournalEntry) string {
	var args map[string]any
	if json.Unmarshal([]byte(e.Args), &args) != nil {
		return e.Tool + " " + clip(e.Args, 200)
	}
	var parts []string
	for _, k := range []string{"path", "new_path", "command"} {
		if v, ok := args[k].(string); ok && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", k, clip(v, 200)))
		}
	}
	if len(parts) == 0 {
		return e.Tool + " " + clip(e.Args, 200)
	}
	return e.Tool + " " + strings.Join(parts, " ")
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
