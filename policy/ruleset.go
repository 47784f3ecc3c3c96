package policy

import (
	"path"
	"slices"
	"strings"
)

// ruleSet is one list of rules (allow, ask, deny or a task's grants)
// indexed so a decision looks at only the rules that can match.
type ruleSet struct {
	rules   []Rule
	byTool  map[string][]int // tool name → bare and glob rules covering it
	bashBy  map[string][]int // first command word → word rules
	bashAny []int            // word rules whose first word is a string prefix
	exact   map[string]int   // Bash=literal → rule
	// exactWords are the exact rules that are one simple command of plain
	// words, as words (exactIdx: their rules), so a deny rule also matches
	// the command inside a wrapper or a script, and an exec's argv.
	exactWords [][]string
	exactIdx   []int
	seen       map[string]bool // canonical forms, to drop duplicates
}

func newRuleSet() *ruleSet {
	return &ruleSet{byTool: map[string][]int{}, bashBy: map[string][]int{}, exact: map[string]int{}, seen: map[string]bool{}}
}

// add inserts r. Indexing by tool name happens here, once, so that Decide
// does map lookups instead of scanning every rule.
func (s *ruleSet) add(r Rule) {
	key := r.String()
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	i := len(s.rules)
	s.rules = append(s.rules, r)
	switch {
	case r.kind == kindExact:
		s.exact[r.spec] = i
		if ws := exactCommandWords(r.spec); ws != nil {
			s.exactWords = append(s.exactWords, ws)
			s.exactIdx = append(s.exactIdx, i)
		}
	case r.family == familyBash && r.kind != kindBare:
		if r.kind == kindRawPrefix && len(r.words) == 1 {
			s.bashAny = append(s.bashAny, i)
		} else {
			s.bashBy[r.words[0]] = append(s.bashBy[r.words[0]], i)
		}
	default:
		for _, tool := range familyTools(r.family) {
			s.byTool[tool] = append(s.byTool[tool], i)
		}
	}
}

func familyTools(family string) []string {
	var set map[string]bool
	switch family {
	case familyBash:
		return []string{"bash"}
	case familyEdit:
		set = editTools
	case familyRead:
		set = readTools
	case familyWebFetch:
		return []string{webFetchTool}
	default:
		return []string{family}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	return out
}

// matchWords reports whether a word rule matches a command's words.
func (r *Rule) matchWords(words []string) bool {
	n := len(r.words)
	if len(words) < n {
		return false
	}
	for i := 0; i < n-1; i++ {
		if words[i] != r.words[i] {
			return false
		}
	}
	switch r.kind {
	case kindPrefix:
		return words[n-1] == r.words[n-1]
	case kindRawPrefix:
		return strings.HasPrefix(words[n-1], r.words[n-1])
	case kindWords:
		return len(words) == n && words[n-1] == r.words[n-1]
	}
	return false
}

// wordRule returns the first word rule matching words, or -1. With broad
// set (deny and ask) a command named by path (/usr/bin/git) is also tried
// under its base name.
func (s *ruleSet) wordRule(words []string, broad bool, kinds func(ruleKind) bool) int {
	if len(words) == 0 {
		return -1
	}
	try := func(ws []string) int {
		for _, i := range s.bashBy[ws[0]] {
			if r := &s.rules[i]; kinds(r.kind) && r.matchWords(ws) {
				return i
			}
		}
		for _, i := range s.bashAny {
			if r := &s.rules[i]; kinds(r.kind) && r.matchWords(ws) {
				return i
			}
		}
		return -1
	}
	if i := try(words); i >= 0 || !broad {
		return i
	}
	if b := path.Base(words[0]); b != words[0] {
		alt := append([]string{b}, words[1:]...)
		return try(alt)
	}
	return -1
}

func anyKind(ruleKind) bool { return true }

// hasBashWords reports whether the set holds any Bash rule naming a
// command (prefix, words or exact form).
func (s *ruleSet) hasBashWords() bool {
	return len(s.bashBy) > 0 || len(s.bashAny) > 0 || len(s.exact) > 0
}

// matchComputed returns the first word rule a command with computed words
// may match once they are known: a computed word matches any rule word.
func (s *ruleSet) matchComputed(c computedCmd) int {
	if len(c.words) == 0 {
		return -1
	}
	match := func(r *Rule) bool {
		n := len(r.words)
		if len(c.words) < n || r.kind == kindWords && len(c.words) != n {
			return false
		}
		for i := 0; i < n; i++ {
			if !c.lit[i] {
				continue
			}
			w := c.words[i]
			if i == 0 {
				w = path.Base(w)
			}
			if w == r.words[i] || i == n-1 && r.kind == kindRawPrefix && strings.HasPrefix(w, r.words[i]) {
				continue
			}
			return false
		}
		return true
	}
	for _, i := range s.bashBy[path.Base(c.words[0])] {
		if match(&s.rules[i]) {
			return i
		}
	}
	for _, i := range s.bashAny {
		if match(&s.rules[i]) {
			return i
		}
	}
	return -1
}

// matchFacts returns the first Bash word or exact rule matching a command
// of the analysed script, or -1: every simple command before and after
// unwrapping, every equivalent (find -delete is rm), every system binary a
// command that is not read-only names as an argument (cp /bin/rm y copies
// rm), and the exact rules also word by word.
func (s *ruleSet) matchFacts(sh *shellFacts) int {
	for _, part := range sh.parts {
		if i := s.wordRule(part.words, true, anyKind); i >= 0 {
			return i
		}
		if i := s.exactRule(part.words); i >= 0 {
			return i
		}
	}
	for _, words := range sh.extra {
		if i := s.wordRule(words, true, anyKind); i >= 0 {
			return i
		}
		if i := s.exactRule(words); i >= 0 {
			return i
		}
	}
	if !sh.readOnly {
		for _, name := range sh.binRefs {
			if rs := s.bashBy[name]; len(rs) > 0 {
				return rs[0]
			}
		}
	}
	return -1
}

// exactRule returns the Bash=exact rule whose command, as words, equals
// words (its name also by base name), or -1.
func (s *ruleSet) exactRule(words []string) int {
	if len(s.exactWords) == 0 || len(words) == 0 {
		return -1
	}
	for i, ws := range s.exactWords {
		if len(ws) != len(words) || !slices.Equal(ws[1:], words[1:]) {
			continue
		}
		if ws[0] == words[0] || ws[0] == path.Base(words[0]) {
			return s.exactIdx[i]
		}
	}
	return -1
}

// exactCommandWords returns the words of an exact rule's command when it
// is one simple command of plain words, else nil.
func exactCommandWords(spec string) []string {
	f := analyzeShell(spec)
	if len(f.parts) != 1 || f.compound || f.dynamic || f.nested != "" || len(f.extra) > 0 {
		return nil
	}
	return f.parts[0].words
}
