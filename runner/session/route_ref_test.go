package session

import (
	"strings"
	"testing"
	"unicode"
)

var (
	refMutationVerbs = words("add", "change", "edit", "fix", "implement", "write", "create", "remove", "delete", "rename",
		"refactor", "update", "replace", "move", "bump", "upgrade", "migrate", "build", "make", "set", "port", "rewrite", "patch")
	refReadOnlyLeads = words("what", "why", "how", "where", "which", "who", "when", "explain", "show", "list", "find", "read",
		"look", "check", "describe", "summarize", "summarise", "review", "is", "are", "does", "do", "can", "tell")
	refRiskWords = words("migration", "migrate", "schema", "security", "auth", "authentication", "authorization", "production",
		"deploy", "deployment", "delete", "drop", "concurrency", "race", "rewrite", "refactor", "secrets", "credentials",
		"payment", "billing", "backwards", "compatibility", "database")
)

// decideRef is Decide as it was before its single pass (#31): the
// reference the agreement tests hold the fast one to.
func decideRef(in RouteInput) RouteDecision {
	text := in.Text
	if len(text) > maxRouteText {
		text = text[:maxRouteText]
	}
	d := RouteDecision{Goal: in.Goal, Synthetic: in.Synthetic}
	bare := normalizeRef(text)
	paths := map[string]bool{}
	first := true
	for _, tok := range strings.Fields(bare) {
		if isPath(tok) && len(paths) < 16 {
			paths[tok] = true
		}
		for w := range wordsOfRef(tok) {
			d.Words++
			if refMutationVerbs[w] {
				d.Mutation = true
			}
			if refRiskWords[w] {
				d.Risk = true
			}
			if first && refReadOnlyLeads[w] {
				d.ReadOnly = true
			}
			first = false
		}
	}
	d.Paths = len(paths)
	d.Structured = listLines(text) >= 2
	d.ReadOnly = d.ReadOnly && !d.Mutation
	switch {
	case !in.Planner:
		d.Route, d.Reason = RouteExecutorOnly, "no planner configured"
	case in.PlanOnly || containsAny(bare, planOnlyPhrases):
		d.Route, d.Reason = RoutePlanOnly, "explicit plan-only request"
	case containsAny(bare, approvalPhrases):
		d.Route, d.Reason = RoutePlanForApproval, "explicit request to wait for approval"
	case in.Synthetic:
		d.Route, d.Reason = RouteExecutorOnly, "synthetic turn"
	case d.Words <= shortReplyWords && !d.Structured:
		d.Route, d.Reason = RouteExecutorOnly, "short contextual reply"
	case d.ReadOnly && !d.Structured:
		d.Route, d.Reason = RouteExecutorOnly, "bounded read-only action"
	case d.Risk || d.Structured || d.Paths >= 3:
		d.Route, d.Reason = RouteFull, "cross-surface, structured or high-risk work"
	case !d.Mutation:
		d.Route, d.Reason = RouteLight, "ambiguous request"
	case d.Words <= atomicWords && d.Paths <= 1:
		d.Route, d.Reason = RouteExecutorOnly, "atomic edit"
	case in.Goal:
		d.Route, d.Reason = RouteFull, "non-atomic change in an active goal"
	default:
		d.Route, d.Reason = RouteLight, "non-atomic change"
	}
	return d
}

// normalize lowercases text, drops its quoted spans (code fences, inline
// code, double quotes: examples, not directives) and collapses whitespace
// to single spaces.
func normalizeRef(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := true
	var quote string // the closing delimiter of the span being skipped
	for i := 0; i < len(text); {
		if quote != "" {
			if text[i] == quote[0] && strings.HasPrefix(text[i:], quote) {
				i += len(quote)
				quote = ""
			} else if text[i] == '\n' && quote != "```" {
				quote = "" // an unclosed inline quote ends with its line
				i++
			} else {
				i++
			}
			continue
		}
		switch c := text[i]; {
		case c == '`' && strings.HasPrefix(text[i:], "```"):
			quote, i = "```", i+3
			continue
		case c == '`' || c == '"':
			quote, i = text[i:i+1], i+1
			continue
		case c == 0xE2 && strings.HasPrefix(text[i:], "“"):
			quote, i = "”", i+len("“")
			continue
		}
		c := text[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			i++
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
		space = false
		i++
	}
	return b.String()
}

func notWordRuneRef(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-'
}

// wordsOf yields the words of tok (runs of letters, digits, ' and -)
// without allocating.
func wordsOfRef(tok string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range tok {
			if notWordRuneRef(r) {
				if start >= 0 && !yield(tok[start:i]) {
					return
				}
				start = -1
			} else if start < 0 {
				start = i
			}
		}
		if start >= 0 {
			yield(tok[start:])
		}
	}
}

// agreementTexts are hostile and ordinary texts the single-pass Decide
// must judge exactly as decideRef did: unicode spaces and letters, invalid
// UTF-8, quotes left open, paths repeated past the cap, long words.
var agreementTexts = []string{
	"", " ", "yes", "Fix the off-by-one in runner/queue.go",
	"Explain how the queue claims a task", "What is 2+2?", "IS this right", "Does it build",
	"Add a database migration that splits the tasks table",
	"Rewrite the scheduler and wait for my approval before you change code",
	"Move auth into its own package; don't implement anything yet",
	"fix the typo in README.md where it says \"plan only\"", "`plan only` is an example, ```\nplan only\n``` too",
	"“plan only” in curly quotes, “unclosed", "add\u00a0a\u2003flag\u3000to\u0085main.go", "añadir café.go ünïcode-wörds don't",
	"fix\xffbroken\xfe utf8 \xe2\x80 half a rune", "a/b a/b a/b c.go c.go d/e f/g h/i j/k l/m n/o p/q r/s t/u v/w x/y z/0 1/2 3/4 5/6",
	"(runner/a.go), [bot/b.go]; <config/c.go>! http://x/y ./z.md .go x.", "authentication" + strings.Repeat("x", 40) + " migrate",
	"- one\n- two\n* three\n# four\n1. five\n2) six", "\t\v\f\r\n add \v\f the -- ' ''  thing",
	"Tidy the release:\n" + strings.Repeat("- bump the version in cmd/reasonix/version.go and update docs/SPEC.md with \"plan only\" as an example\n", 40),
	strings.Repeat("ask me before you start ", 300), strings.Repeat("é", 3000),
}

func decideAgree(t *testing.T, text string) {
	for _, in := range []RouteInput{{Text: text, Planner: true}, {Text: text, Planner: true, Goal: true}, {Text: text, Planner: true, Synthetic: true}} {
		if got, want := Decide(in), decideRef(in); got != want {
			t.Fatalf("Decide(%q) = %+v, the reference decided %+v", in.Text, got, want)
		}
	}
}

// TestDecideAgreesWithReference: the single-pass Decide takes the route,
// the reason and every count and flag the reference took.
func TestDecideAgreesWithReference(t *testing.T) {
	for _, text := range agreementTexts {
		decideAgree(t, text)
	}
	for _, bc := range decideCases {
		decideAgree(t, bc.text)
	}
}

// FuzzDecideAgreesWithReference holds the same for any text.
func FuzzDecideAgreesWithReference(f *testing.F) {
	for _, text := range agreementTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) { decideAgree(t, text) })
}
