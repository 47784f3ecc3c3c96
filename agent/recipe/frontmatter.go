package recipe

import (
	"errors"
	"fmt"
	"strings"
)

// maxFrontMatterLines bounds the header: a recipe with more lines of
// metadata than this is a mistake, not a recipe.
const maxFrontMatterLines = 64

// frontMatter is a recipe's optional header: simple "key: value" lines
// between two "---" fences. Keys are lower-cased; a repeated key keeps its
// last value.
type frontMatter map[string]string

var errUnclosed = errors.New("the front matter opened with --- has no closing --- line")

// splitFrontMatter separates the header from the body. Text that does not
// start with a "---" line has no header and is all body. A header line
// that is not "key: value" (blank lines and # comments aside) makes the
// whole file malformed: silently dropping it would hide a typo.
func splitFrontMatter(text string) (frontMatter, string, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	first, rest, ok := cutLine(text)
	if strings.TrimRight(first, " \t") != "---" {
		return nil, text, nil
	}
	fm := frontMatter{}
	for n := 0; ; n++ {
		if !ok {
			return nil, "", errUnclosed
		}
		var line string
		line, rest, ok = cutLine(rest)
		trimmed := strings.TrimSpace(line)
		if trimmed == "---" {
			return fm, rest, nil
		}
		if n >= maxFrontMatterLines {
			return nil, "", fmt.Errorf("the front matter is longer than %d lines", maxFrontMatterLines)
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, value, found := strings.Cut(trimmed, ":")
		key = strings.ToLower(strings.TrimSpace(key))
		if !found || !validKey(key) {
			return nil, "", fmt.Errorf("front matter line %d is not \"key: value\"", n+2)
		}
		fm[key] = unquote(strings.TrimSpace(value))
	}
}

// cutLine returns the first line of s (without its newline) and the rest;
// ok is false when s held no newline.
func cutLine(s string) (line, rest string, ok bool) {
	line, rest, ok = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest, ok
}

func validKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// unquote strips one pair of matching quotes, the way people write
// description: "Review the diff" by habit.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// list reads a value written as "a, b" or "[a, b]".
func list(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		if p := unquote(strings.TrimSpace(part)); p != "" {
			out = append(out, p)
		}
	}
	return out
}
