package apitype

import (
	"encoding/json"
	"fmt"
)

// Instructions is the payload of an "instructions" event: the instruction
// files (REASONIX.md, AGENTS.md, CLAUDE.md; the user's and the
// repository's) a task's prompt held, or, with For, those of a directory a
// tool result brought in.
type Instructions struct {
	// Commit is the base commit the repository's files were read at; ""
	// for files read from a checkout as it is.
	Commit string            `json:"commit,omitempty"`
	For    string            `json:"for,omitempty"`
	Error  string            `json:"error,omitempty"` // the repository's files could not be read
	Files  []InstructionFile `json:"files"`
}

// InstructionFile is one instruction file an Instructions event names.
type InstructionFile struct {
	Scope     string `json:"scope"` // "user" or "project"
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
	Skipped   string `json:"skipped,omitempty"` // why it was left out
}

// InstructionsOf reads an event of type typ as Instructions; false for an
// event of another type or a payload that is not one.
func InstructionsOf(typ string, payload json.RawMessage) (Instructions, bool) {
	var p Instructions
	if typ != "instructions" || json.Unmarshal(payload, &p) != nil {
		return Instructions{}, false
	}
	return p, true
}

// Name is the file as people read it: its path, "user:" first for the
// user's own.
func (f InstructionFile) Name() string {
	if f.Scope == "user" {
		return "user:" + f.Path
	}
	return f.Path
}

// ShortCommit is a commit as people read it: its first 12 characters.
func ShortCommit(c string) string { return c[:min(len(c), 12)] }

// ByteSize says n bytes in the unit a person reads at a glance.
func ByteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
