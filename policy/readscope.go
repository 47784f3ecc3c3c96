package policy

import "strings"

// readsOutside names the first path a read-only file tool would read
// outside the workspace and the allow_read roots, or "" when every path
// stays inside. Paths are resolved through symbolic links, so a link in
// the workspace does not carry a read out of it. Under the ask posture such
// a read needs a person: the workspace is what the task was given to read.
func (g *Gate) readsOutside(tool string, f *callFacts) string {
	if f.sh != nil || f.sub.isShell {
		return "" // shell reads are the sandbox's business
	}
	paths := f.sub.paths
	if tool == "glob" {
		for _, p := range f.sub.patterns {
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "..") {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "~") {
			return p
		}
		r, err := resolvePath(p, g.readRoot)
		if err != nil {
			return p
		}
		if within(r, g.readRoot) {
			continue
		}
		inside := false
		for _, root := range g.allowRead {
			inside = inside || within(r, root)
		}
		if !inside {
			return p
		}
	}
	return ""
}
