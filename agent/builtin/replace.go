package builtin

import (
	"errors"
	"fmt"
	"strings"
)

// edit is one exact-string replacement, shared by edit_file and multi_edit.
type edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

var (
	errEditEmptyOld = errors.New("old_string must not be empty (use write_file to create or overwrite a whole file)")
	errEditNoChange = errors.New("old_string and new_string are identical, so the edit would change nothing")
	errEditNotFound = errors.New("old_string not found in the file; read the file again and copy the exact text, including whitespace and indentation")
)

// apply performs e on content. Without ReplaceAll the old string must occur
// exactly once: an ambiguous edit is refused rather than guessed, because
// changing the wrong occurrence silently is worse than asking for context.
// It returns the new content, the number of replacements and the 1-based
// line of the first one.
func (e edit) apply(content string) (string, int, int, error) {
	if e.OldString == "" {
		return "", 0, 0, errEditEmptyOld
	}
	if e.OldString == e.NewString {
		return "", 0, 0, errEditNoChange
	}
	n := strings.Count(content, e.OldString)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(e.OldString, "\n") && !strings.Contains(e.OldString, "\r") {
		// read_file shows CRLF files without the \r, so the model's copy of
		// a multi-line passage lacks it; match it in the file's own endings.
		crlf := edit{
			OldString:  strings.ReplaceAll(e.OldString, "\n", "\r\n"),
			NewString:  strings.ReplaceAll(strings.ReplaceAll(e.NewString, "\r\n", "\n"), "\n", "\r\n"),
			ReplaceAll: e.ReplaceAll,
		}
		if strings.Contains(content, crlf.OldString) {
			return crlf.apply(content)
		}
	}
	if n == 0 {
		return "", 0, 0, errEditNotFound
	}
	if n > 1 && !e.ReplaceAll {
		return "", 0, 0, fmt.Errorf("old_string occurs %d times; include more surrounding context to make it unique, or set replace_all to change every occurrence", n)
	}
	line := strings.Count(content[:strings.Index(content, e.OldString)], "\n") + 1
	if e.ReplaceAll {
		return strings.ReplaceAll(content, e.OldString, e.NewString), n, line, nil
	}
	return strings.Replace(content, e.OldString, e.NewString, 1), 1, line, nil
}

// plural renders "1 occurrence" / "3 occurrences".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
