package recipe

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// The instruction files of a directory, in the order a prompt holds them.
// CLAUDE.md counts only in a directory where neither of the others could
// be read, as Claude Code's and Codex's users expect when a repository
// keeps one file under two names.
var instructionNames = [...]string{"REASONIX.md", "AGENTS.md", "CLAUDE.md"}

// MaxInstructionBytes bounds the instruction text one prompt carries, all
// files together; the file that crosses it is cut (and marked so), later
// ones are left out.
const MaxInstructionBytes = 32 << 10

// InstructionPaths returns the instruction file candidates of each
// repository directory ("" the root), slash-separated, to be read.
func InstructionPaths(dirs ...string) []string {
	out := make([]string, 0, len(dirs)*len(instructionNames))
	for _, d := range dirs {
		for _, n := range instructionNames {
			out = append(out, path.Join(d, n))
		}
	}
	return out
}

// InstructionDirs returns the directories between the root and the file
// at rel (slash-separated, repository-relative), outermost first, the root
// and the file itself excluded: "a/b/c.go" gives "a", "a/b". A path that
// leaves the root gives none.
func InstructionDirs(rel string) []string {
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	var out []string
	for i := 0; i < len(dir); i++ {
		if dir[i] == '/' {
			out = append(out, dir[:i])
		}
	}
	return append(out, dir)
}

// InstructionFile says what became of one instruction file: read whole,
// cut at the bound, or skipped (with why).
type InstructionFile struct {
	Scope     Scope  `json:"scope"`
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
}

// Instructions is the instruction files a prompt carries: Text is what is
// appended to the system prompt ("" when there are none), Files what was
// used, for the task's event log.
type Instructions struct {
	Text  string
	Files []InstructionFile
}

// LoadInstructions chooses and renders the instruction files of layers
// (the user's first, then the repository's), whose Files are named as
// InstructionPaths names them, directories outermost first. The result
// depends only on the files, never on their order of arrival within a
// directory, so the same commit gives byte-identical text and prompt
// caches keep hitting. budget bounds the text; 0 is MaxInstructionBytes.
func LoadInstructions(budget int, layers ...Layer) Instructions {
	if budget <= 0 {
		budget = MaxInstructionBytes
	}
	var out Instructions
	var b strings.Builder
	var seen [][]byte
	for _, l := range layers {
		for _, f := range pickInstructions(l.Files) {
			info := InstructionFile{Scope: l.Scope, Path: f.Path, Bytes: len(f.Data)}
			switch {
			case f.Refused != "":
				info.Skipped = f.Refused
			case len(bytes.TrimSpace(f.Data)) == 0:
				info.Skipped = "empty"
			case containsBytes(seen, f.Data):
				info.Skipped = "the same text as a file above"
			case budget <= 0:
				info.Skipped = fmt.Sprintf("over the %d KiB bound of instructions", MaxInstructionBytes>>10)
			default:
				seen = append(seen, f.Data)
				text := string(bytes.TrimSpace(f.Data))
				if len(text) > budget {
					text, info.Truncated = cutUTF8(text, budget)
					text += "\n[cut: the instructions' size bound was reached]"
				}
				budget -= len(text)
				source := f.Path
				if l.Scope == ScopeUser {
					source = "user:" + f.Path
				}
				fmt.Fprintf(&b, "\n\n<instructions source=%q>\n%s\n</instructions>", source, text)
			}
			out.Files = append(out.Files, info)
		}
	}
	if b.Len() > 0 {
		out.Text = instructionsHeader + b.String()
	}
	return out
}

// instructionsHeader introduces the instruction files in the system
// prompt.
const instructionsHeader = "\n\n# Instructions\n\nThe repository's instruction files (and the operator's own, source \"user:\") follow, outermost first; " +
	"a file deeper in the tree refines the ones above it for its directory. Follow them where they do not conflict with your permissions or the task."

// pickInstructions returns files in directory order, each directory's
// REASONIX.md and AGENTS.md, and its CLAUDE.md only when neither of those
// could be read.
func pickInstructions(files []File) []File {
	byPath := make(map[string]File, len(files))
	var dirs []string
	for _, f := range files {
		d, n := path.Split(f.Path)
		if !isInstructionName(n) {
			continue
		}
		if _, dup := byPath[f.Path]; dup {
			continue
		}
		byPath[f.Path] = f
		if !containsString(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	var out []File
	for _, d := range dirs {
		read := false
		for _, n := range instructionNames {
			f, ok := byPath[d+n]
			if !ok || (n == "CLAUDE.md" && read) {
				continue
			}
			read = read || f.Refused == "" && len(f.Data) > 0
			out = append(out, f)
		}
	}
	return out
}

func isInstructionName(n string) bool {
	for _, m := range instructionNames {
		if n == m {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// cutUTF8 returns s cut to at most n bytes on a character boundary.
func cutUTF8(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// ReadInstructionFiles reads the instruction files of dirs (slash-separated,
// relative to root; "" is root itself) from a directory on disk: a user's
// own checkout or the Reasonix home, never a service task's worktree (the
// service reads a task's from its base commit). A file is opened through an
// os.Root, so a link cannot lead outside root; one over MaxFileBytes is
// passed Refused.
func ReadInstructionFiles(root string, dirs ...string) []File {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	var out []File
	for _, p := range InstructionPaths(dirs...) {
		f, err := r.Open(p)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		switch {
		case err != nil || !st.Mode().IsRegular():
		case st.Size() > MaxFileBytes:
			out = append(out, File{Path: p, Refused: fmt.Sprintf("larger than %d KiB", MaxFileBytes>>10)})
		default:
			if data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes)); err == nil {
				out = append(out, File{Path: p, Data: data})
			}
		}
		f.Close()
	}
	return out
}
