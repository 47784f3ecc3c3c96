package bot

import (
	"strings"
	"unicode/utf8"
)

// Format is a platform's markup. Escape must make any text inert: no
// markup, no links, no mentions that ping.
type Format interface {
	Escape(s string) string
	Bold(escaped string) string
	Code(escaped string) string // a preformatted block
	// Limit is the most characters one message may carry.
	Limit() int
}

// Mentioner is the optional Format behaviour of mentioning a person so
// that the platform notifies them: user is the platform's user id, name
// (plain text) what to show where the platform shows no name of its own.
// Used only where a person should act (a question for the requester, an
// approval for its approvers); never for text from the model.
type Mentioner interface {
	Mention(user, name string) string
}

// Split cuts escaped text into parts of at most limit runes, preferring
// line breaks, so a long report becomes several messages rather than a
// rejected one. It never cuts inside an HTML entity (&amp; &lt; &gt;),
// which is how both platforms escape.
func Split(text string, limit int) []string {
	if limit <= 0 || utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	var parts []string
	for utf8.RuneCountInString(text) > limit {
		cut := byteIndexOfRune(text, limit)
		if nl := strings.LastIndexByte(text[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
		} else if amp := strings.LastIndexByte(text[:cut], '&'); amp >= 0 && cut-amp < 8 && !strings.Contains(text[amp:cut], ";") && amp > 0 {
			cut = amp
		}
		parts = append(parts, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		parts = append(parts, text)
	}
	return parts
}

// Tail keeps the last limit runes of text, marking the cut: a report's end
// (the outcome) matters more than its start.
func Tail(text string, limit int) string {
	n := utf8.RuneCountInString(text)
	if n <= limit {
		return text
	}
	return "…" + text[byteIndexOfRune(text, n-limit+1):]
}

func byteIndexOfRune(s string, n int) int {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
