package session

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Route is how the two-model Coordinator (seed §3.5) handles one user
// turn when [agent] planner_model names a planner.
type Route string

// The routes, from no planner at all to a plan that is never executed.
const (
	// RouteExecutorOnly sends the turn to the executor alone.
	RouteExecutorOnly Route = "executor-only"
	// RouteLight asks the planner for a compact plan (objective, 1-4
	// steps, touchpoints, one check) with a small research budget.
	RouteLight Route = "light"
	// RouteFull asks for the full contract (verified and candidate
	// touchpoints, risks, acceptance criteria, command-level checks,
	// rollback) with a larger budget.
	RouteFull Route = "full"
	// RoutePlanForApproval plans, then waits for a person's approval
	// before the executor starts; planner failure fails closed.
	RoutePlanForApproval Route = "plan-for-approval"
	// RoutePlanOnly plans, persists the plan and executes nothing;
	// planner failure fails closed.
	RoutePlanOnly Route = "plan-only"
)

// RouteInput is what the host policy sees: the pristine user text and
// trusted metadata about the turn. Nothing a controller or a tool wrote
// into the prompt is an input (seed §3.5).
type RouteInput struct {
	Text string
	// PlanOnly is an explicit plan-only request made outside the text
	// (the chat `plan` command, a task option).
	PlanOnly bool
	// Goal and Synthetic mark an active goal's turn and a host-generated
	// turn (a continuation, a redirect).
	Goal      bool
	Synthetic bool
	// Planner is false when no planner is configured.
	Planner bool
}

// RouteDecision is the route and the privacy-safe facts that chose it:
// counts and flags, never the user's words. It is the payload of the
// phase_detail event.
type RouteDecision struct {
	Route      Route  `json:"route"`
	Reason     string `json:"reason"`
	Words      int    `json:"words"`
	Paths      int    `json:"paths"`
	Structured bool   `json:"structured"`
	Mutation   bool   `json:"mutation"`
	ReadOnly   bool   `json:"read_only"`
	Risk       bool   `json:"risk"`
	Goal       bool   `json:"goal"`
	Synthetic  bool   `json:"synthetic"`
}

// Limits of the policy: a short contextual reply, an atomic edit, and the
// text judged (a longer request is judged by its first 4 KiB, where its
// directives and its shape show; it keeps the decision within budget).
const (
	shortReplyWords = 6
	atomicWords     = 30
	maxRouteText    = 4 << 10
)

// The directives, matched in the lowercased text without its quoted spans
// and with its whitespace collapsed. Plain substring search keeps the
// decision far below its 100 µs budget.
var (
	planOnlyPhrases = []string{"plan only", "only make a plan", "only write a plan", "only draft a plan", "just make a plan",
		"just write a plan", "just plan", "do not execute", "don't execute", "do not implement", "don't implement",
		"do not make any changes", "don't make any changes", "do not change anything", "don't change anything",
		"without executing", "without implementing", "without making changes"}
	approvalPhrases = []string{"wait for my approval", "wait for approval", "wait for my confirmation", "wait for confirmation",
		"wait for my go-ahead", "wait for my ok", "for my approval", "show me the plan before", "send me the plan before",
		"plan first and wait", "plan first, then wait", "plan it first and wait", "ask me before you start",
		"ask me before starting", "ask me before implementing", "ask me before you implement"}
	codeExts = words("go", "py", "ts", "tsx", "js", "jsx", "rs", "java", "rb", "c", "h", "cpp", "md", "toml", "yaml", "yml",
		"json", "sql", "sh", "proto", "html", "css")
)

var (
	mutationVerbs = []string{"add", "change", "edit", "fix", "implement", "write", "create", "remove", "delete", "rename",
		"refactor", "update", "replace", "move", "bump", "upgrade", "migrate", "build", "make", "set", "port", "rewrite", "patch"}
	readOnlyLeads = []string{"what", "why", "how", "where", "which", "who", "when", "explain", "show", "list", "find", "read",
		"look", "check", "describe", "summarize", "summarise", "review", "is", "are", "does", "do", "can", "tell"}
	riskWords = []string{"migration", "migrate", "schema", "security", "auth", "authentication", "authorization", "production",
		"deploy", "deployment", "delete", "drop", "concurrency", "race", "rewrite", "refactor", "secrets", "credentials",
		"payment", "billing", "backwards", "compatibility", "database"}
)

// The word classes, one lookup per word.
const (
	wordMutation uint8 = 1 << iota
	wordRisk
	wordReadOnlyLead
)

// wordClass maps each listed word to its classes; wordMin and wordMax
// bound their lengths, so most words need no lookup at all.
var wordClass, wordMin, wordMax = func() (map[string]uint8, int, int) {
	m := map[string]uint8{}
	lo, hi := 1<<30, 0
	for class, list := range map[uint8][]string{wordMutation: mutationVerbs, wordRisk: riskWords, wordReadOnlyLead: readOnlyLeads} {
		for _, w := range list {
			m[w] |= class
			lo, hi = min(lo, len(w)), max(hi, len(w))
		}
	}
	return m, lo, hi
}()

func words(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Decide chooses the route of one turn. It is deterministic and calls no
// model: the same input always takes the same route. One pass normalizes
// the text (its only allocation), one more walks its tokens and their
// words without allocating; the directive phrases are searched only when
// one of their stems occurs.
func Decide(in RouteInput) RouteDecision {
	text := in.Text
	if len(text) > maxRouteText {
		text = text[:maxRouteText]
	}
	d := RouteDecision{Goal: in.Goal, Synthetic: in.Synthetic}
	bare := normalize(text)
	var paths [16]string
	npaths := 0
	first := true
	tokStart, wordStart := -1, -1
	// One pass over the tokens (split at white space, as strings.Fields
	// splits) and their words (runs of letters, digits, ' and -).
	for i := 0; i <= len(bare); {
		n, class := 1, byteSpace // the end of the text ends both
		if i < len(bare) {
			if c := bare[i]; c < utf8.RuneSelf {
				class = asciiClass[c]
			} else {
				var r rune
				r, n = utf8.DecodeRuneInString(bare[i:])
				switch {
				case unicode.IsSpace(r):
					class = byteSpace
				case notWordRune(r):
					class = 0
				default:
					class = byteWord
				}
			}
		}
		if class == byteWord {
			if wordStart < 0 {
				wordStart = i
			}
		} else if wordStart >= 0 {
			w := bare[wordStart:i]
			wordStart = -1
			d.Words++
			if len(w) >= wordMin && len(w) <= wordMax {
				c := wordClass[w]
				d.Mutation = d.Mutation || c&wordMutation != 0
				d.Risk = d.Risk || c&wordRisk != 0
				d.ReadOnly = d.ReadOnly || first && c&wordReadOnlyLead != 0
			}
			first = false
		}
		if class == byteSpace {
			if tokStart >= 0 {
				tok := bare[tokStart:i]
				tokStart = -1
				if npaths < len(paths) && isPath(tok) && !slices.Contains(paths[:npaths], tok) {
					paths[npaths] = tok
					npaths++
				}
			}
		} else if tokStart < 0 {
			tokStart = i
		}
		i += n
	}
	d.Paths = npaths
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

// The classes of an ASCII byte in Decide's pass: white space (as
// strings.Fields has it), a word byte, or neither.
const (
	byteSpace uint8 = 1 + iota
	byteWord
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for _, c := range "\t\n\v\f\r " {
		t[c] = byteSpace
	}
	for c := range utf8.RuneSelf {
		if !notWordRune(rune(c)) {
			t[c] = byteWord
		}
	}
	return t
}()

// normalize lowercases text, drops its quoted spans (code fences, inline
// code, double quotes: examples, not directives) and collapses whitespace
// to single spaces.
func normalize(text string) string {
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

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-'
}

// isPath reports whether a token names a file or directory: it has a
// slash between word characters, or ends in a known source extension.
func isPath(tok string) bool {
	if strings.IndexByte(tok, '/') < 0 && strings.IndexByte(tok, '.') < 0 {
		return false
	}
	tok = strings.TrimFunc(tok, func(r rune) bool { return strings.ContainsRune("([<'.,;:)]>!?", r) })
	if i := strings.IndexByte(tok, '/'); i > 0 && i < len(tok)-1 && !strings.Contains(tok, "://") {
		return true
	}
	if i := strings.LastIndexByte(tok, '.'); i > 0 {
		return codeExts[tok[i+1:]]
	}
	return false
}

// listLines counts lines that are list items or headings.
func listLines(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		l := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "#"):
			n++
		case len(l) > 2 && l[0] >= '0' && l[0] <= '9':
			j := 0
			for j < len(l) && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j < len(l)-1 && (l[j] == '.' || l[j] == ')') && l[j+1] == ' ' {
				n++
			}
		}
		if n >= 3 {
			break
		}
	}
	return n
}

// directiveStems are in every directive phrase: a text without any of
// them needs no phrase search.
var directiveStems = []string{"plan", "execut", "implement", "chang", "approv", "confirm", "go-ahead", "ok", "ask me"}

func containsAny(s string, phrases []string) bool {
	if !slices.ContainsFunc(directiveStems, func(stem string) bool { return strings.Contains(s, stem) }) {
		return false
	}
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
