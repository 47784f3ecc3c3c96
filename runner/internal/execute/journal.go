package execute

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"reasonix/agent"
	"reasonix/runner/store"
)

// UnknownOutcome is what the model is told about a writer whose call
// started but never finished: it may or may not have had its effect.
const UnknownOutcome = "error: the outcome of this call is unknown: the process stopped while it ran; inspect the workspace before retrying"

// JournalKey names a call in the journal: the sequence number of the
// assistant message that asked for it and the call id, because a model's
// call ids need not be unique across turns.
func JournalKey(asstSeq int64, callID string) string {
	return fmt.Sprintf("%d/%s", asstSeq, callID)
}

// ArgsHash is the sha256 of a call's canonical JSON arguments.
func ArgsHash(args json.RawMessage) string {
	sum := sha256.Sum256(CanonicalJSON(args))
	return hex.EncodeToString(sum[:])
}

// CanonicalJSON re-encodes a JSON value with sorted keys and no spaces; a
// value that does not parse is used as it is.
func CanonicalJSON(raw []byte) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// PendingCalls finds the calls of a conversation's last assistant message
// that no tool message answers yet. asstSeq is that message's sequence
// number (message seqs start at 1 and have no gaps), 0 when the
// conversation does not end with an assistant message and its answers.
func PendingCalls(history []agent.Message) (asstSeq int64, pending []agent.ToolCall) {
	idx := -1
	answered := map[string]bool{}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == agent.RoleTool {
			answered[history[i].ToolCallID] = true
			continue
		}
		if history[i].Role == agent.RoleAssistant {
			idx = i
		}
		break
	}
	if idx < 0 {
		return 0, nil
	}
	for _, c := range history[idx].ToolCalls {
		if !answered[c.ID] {
			pending = append(pending, c)
		}
	}
	return int64(idx + 1), pending
}

// Settled is the journal's answer for a pending call: the tool message's
// Content, and Unknown when it is UnknownOutcome (a writer that started
// and never finished: the journal entry Key must be finished with it).
type Settled struct {
	Call    agent.ToolCall
	Key     string
	Content string
	Unknown bool
}

// Settle answers the pending calls of assistant message asstSeq from the
// journal's entries: a finished call gets its recorded result (it is not
// run again); a writer that started but never finished gets
// UnknownOutcome (never silently re-run); a read-only call (readOnly) that
// never finished, and a call that never started, are left out, so the run
// continues by running them.
func Settle(asstSeq int64, pending []agent.ToolCall, entries []store.JournalEntry, readOnly func(tool string) bool) []Settled {
	byKey := map[string]store.JournalEntry{}
	for _, e := range entries {
		byKey[e.CallID] = e
	}
	var out []Settled
	for _, c := range pending {
		key := JournalKey(asstSeq, c.ID)
		e, started := byKey[key]
		if !started {
			continue
		}
		s := Settled{Call: c, Key: key, Content: e.Result}
		if e.FinishedAt.IsZero() {
			if readOnly(c.Name) {
				continue // safe to run again
			}
			s.Content, s.Unknown = UnknownOutcome, true
		}
		out = append(out, s)
	}
	return out
}
