package dashboard

import (
	"encoding/json"
	"fmt"

	"reasonix/runner/store"
)

// instructionsUsed is the task page's "Instructions used": the instruction
// files (REASONIX.md, AGENTS.md, CLAUDE.md; the user's and the
// repository's) the task's prompt held, as the runner's "instructions"
// events name them, with the commit they were read at and their sizes.
type instructionsUsed struct {
	Commit string // short; "" for files read from a checkout as it is
	Error  string // the repository's files could not be read
	Files  []instructionFile
}

type instructionFile struct {
	Name      string // "AGENTS.md", "user:AGENTS.md", "pkg/CLAUDE.md"
	Size      string // "1.2 KB"
	Truncated bool
	Skipped   string // why the file was left out
	For       string // the directory a tool result brought it in for
}

// instructionsOf reads the "instructions" events of evs. The first run's
// event names the prompt's files; later ones ({for, files}) name a
// directory's files handed with a tool result, listed after them.
func instructionsOf(evs []store.Event) *instructionsUsed {
	var out *instructionsUsed
	for _, e := range evs {
		if e.Type != "instructions" {
			continue
		}
		var p struct {
			Commit string `json:"commit"`
			For    string `json:"for"`
			Error  string `json:"error"`
			Files  []struct {
				Scope     string `json:"scope"`
				Path      string `json:"path"`
				Bytes     int    `json:"bytes"`
				Truncated bool   `json:"truncated"`
				Skipped   string `json:"skipped"`
			} `json:"files"`
		}
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		if out == nil {
			out = &instructionsUsed{}
		}
		if out.Commit == "" && p.For == "" {
			out.Commit = shortCommit(p.Commit)
		}
		out.Error = cmpOr(out.Error, p.Error)
		for _, f := range p.Files {
			name := f.Path
			if f.Scope == "user" {
				name = "user:" + name
			}
			out.Files = append(out.Files, instructionFile{Name: name, Size: byteSize(f.Bytes), Truncated: f.Truncated,
				Skipped: f.Skipped, For: p.For})
		}
	}
	return out
}

// shortCommit is a commit as people read it: its first 12 characters.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// byteSize says n bytes in the unit a person reads at a glance.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
