package agent

import (
	"errors"
	"strings"
	"unicode"
)

// Digest is the structured summary of a compacted stretch of conversation:
// markdown "## Title" sections, in order. A Section with an empty Title can
// only come first (text before the first heading).
type Digest struct {
	Sections []DigestSection
}

// DigestSection is one "## Title" section of a Digest.
type DigestSection struct {
	Title string
	Body  string
}

// digestTitles are the sections the summarizer is asked for.
var digestTitles = []string{
	"Goal and constraints",
	"Done so far",
	"Current state",
	"Key facts and decisions",
	"Files",
	"Next steps",
}

// ErrEmptyDigest is returned by ParseDigest for text with nothing in it.
var ErrEmptyDigest = errors.New("agent: the digest is empty")

// ParseDigest reads a model's digest: an optional code fence around it is
// dropped, "## " lines start sections, and blank space around titles and
// bodies is trimmed. Text with no heading becomes one untitled section.
// Model output is untrusted; any text parses, and only empty text fails.
func ParseDigest(text string) (Digest, error) {
	text = strings.ReplaceAll(text, "\r", "") // carriage returns carry nothing a digest needs
	text = stripFence(strings.TrimSpace(text))
	var (
		d    Digest
		cur  *DigestSection
		body strings.Builder
	)
	flush := func() {
		if cur != nil {
			cur.Body = trimBody(body.String())
			if cur.Title != "" || cur.Body != "" {
				d.Sections = append(d.Sections, *cur)
			}
		}
		body.Reset()
	}
	cur = &DigestSection{}
	for line := range strings.SplitSeq(text, "\n") {
		if title, ok := heading(line); ok {
			flush()
			cur = &DigestSection{Title: title}
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	if len(d.Sections) == 0 {
		return Digest{}, ErrEmptyDigest
	}
	return d, nil
}

// trimBody drops the space around a body, except the indentation that
// keeps a first line such as " ## x" text: it must not become a heading
// when the digest is rendered and read again.
func trimBody(s string) string {
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if t := strings.TrimLeftFunc(s, unicode.IsSpace); !strings.HasPrefix(t, "## ") {
		return t
	}
	return s
}

// heading reports whether line is a "## Title" heading and its title.
func heading(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return "", false
	}
	title := strings.TrimSpace(rest)
	return title, title != ""
}

// stripFence removes one markdown code fence wrapping a whole digest (a
// model's habit). Only a fence around headings is a wrapper; anything else
// is content and stays, which keeps ParseDigest(d.String()) equal to d.
func stripFence(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasSuffix(rest, "\n```") && rest != "```" {
		return s
	}
	switch strings.TrimSpace(first) {
	case "```", "```markdown", "```md":
	default:
		return s
	}
	inner := strings.TrimSpace(strings.TrimSuffix(rest, "```"))
	if strings.HasPrefix(inner, "```") || !strings.HasPrefix(inner, "## ") && !strings.Contains(inner, "\n## ") {
		return s
	}
	return inner
}

// String renders d in the form ParseDigest reads back unchanged.
func (d Digest) String() string {
	var b strings.Builder
	for i, s := range d.Sections {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if s.Title != "" {
			b.WriteString("## " + s.Title)
			if s.Body != "" {
				b.WriteByte('\n')
			}
		}
		b.WriteString(s.Body)
	}
	return b.String()
}

// digestMessage is the user message that carries a checkpoint to the model:
// the requester's kept turns verbatim, the failure lines the keep policy
// protects, then the digest.
func digestMessage(kept, failures []string, digest string) string {
	var b strings.Builder
	b.WriteString("<context-digest>\nEarlier steps of this conversation were condensed to fit the model's context window. " +
		"The task above and the messages after this one are verbatim; this digest stands for what came between. " +
		"Re-read files rather than trusting details the digest may have lost.\n")
	if len(kept) > 0 {
		b.WriteString("\nThe requester's messages in that stretch, verbatim:\n")
		for _, k := range kept {
			b.WriteString("<requester-message>\n" + k + "\n</requester-message>\n")
		}
	}
	if len(failures) > 0 {
		b.WriteString("\nFailed tool results in that stretch, their failing lines verbatim:\n")
		for _, f := range failures {
			b.WriteString("<failure>\n" + f + "\n</failure>\n")
		}
	}
	b.WriteString("\n" + digest + "\n</context-digest>")
	return b.String()
}
