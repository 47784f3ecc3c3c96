package recipe

import "strings"

// maxNameLen bounds a command word; longer is never a command.
const maxNameLen = 200

// CommandWord reports whether the first word of text names a command and
// splits it off: "/review pkg/foo" → ("review", "pkg/foo", true). Only a
// slash followed by letters, digits, '-', '_' and ':' counts, so
// "/tmp/x is broken" (a second slash) is not a command and stays the
// prompt as typed.
func CommandWord(text string) (name, rest string, ok bool) {
	text = strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	end := strings.IndexAny(text, " \t\r\n")
	if end < 0 {
		end = len(text)
	}
	name = text[1:end]
	if name == "" || len(name) > maxNameLen {
		return "", "", false
	}
	for i := 0; i < len(name); i++ {
		if !wordByte(name[i]) {
			return "", "", false
		}
	}
	return name, strings.TrimSpace(text[end:]), true
}

// SplitArgs is the arguments of a command: the space-separated tokens
// after its name.
func SplitArgs(s string) []string { return strings.Fields(s) }
