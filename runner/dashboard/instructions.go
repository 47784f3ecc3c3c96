package dashboard

import (
	"reasonix/runner/apitype"
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
		p, ok := apitype.InstructionsOf(e.Type, e.Payload)
		if !ok {
			continue
		}
		if out == nil {
			out = &instructionsUsed{}
		}
		if out.Commit == "" && p.For == "" {
			out.Commit = apitype.ShortCommit(p.Commit)
		}
		out.Error = cmpOr(out.Error, p.Error)
		for _, f := range p.Files {
			out.Files = append(out.Files, instructionFile{Name: f.Name(), Size: apitype.ByteSize(f.Bytes), Truncated: f.Truncated,
				Skipped: f.Skipped, For: p.For})
		}
	}
	return out
}
