package policy

import (
	"path"
	"slices"
	"strings"
)

// DeniedCommands returns the command names Bash deny rules name, sorted:
// the first word of every prefix, word and exact rule (a path reduced to
// its base name), and the commands the analyser counts as running one of
// them (unlink, shred, rmdir, mv, find and git delete like rm). Exec-time
// enforcement fingerprints the system binaries of these names to know a
// copy of one by its content.
func (p *Policy) DeniedCommands() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, r := range p.deny.rules {
		if r.family != familyBash {
			continue
		}
		switch r.kind {
		case kindPrefix, kindRawPrefix, kindWords:
			out = append(out, path.Base(r.words[0]))
		case kindExact:
			if ws := strings.Fields(r.spec); len(ws) > 0 {
				out = append(out, path.Base(strings.Trim(ws[0], `'"\`)))
			}
		}
	}
	if slices.Contains(out, "rm") {
		out = append(out, rmLike...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rmLike are the commands deleterAlso, gitAlso and classifyFind count as rm.
var rmLike = []string{"unlink", "shred", "rmdir", "mv", "find", "git"}
