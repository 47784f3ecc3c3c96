package builtin

import (
	"fmt"
	"path"
	"strings"
)

// maxBraceExpansions bounds how many plain patterns one brace pattern may
// expand to, so "{a,b}{c,d}..." cannot explode.
const maxBraceExpansions = 64

// globPattern matches slash-separated relative paths. Segments follow
// path.Match; a segment that is exactly "**" matches any number of
// segments, including none; {a,b} alternatives are expanded first.
type globPattern struct {
	alts [][]string // one segment list per brace alternative
}

// compileGlob parses pattern, rejecting malformed ones with an error the
// model can act on.
func compileGlob(pattern string) (*globPattern, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern must not be empty")
	}
	expanded, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &globPattern{}
	for _, p := range expanded {
		segs := strings.Split(strings.Trim(p, "/"), "/")
		var clean []string
		for _, s := range segs {
			if s == "" || s == "." {
				continue
			}
			// "**" after "**" adds nothing and only slows matching.
			if s == "**" && len(clean) > 0 && clean[len(clean)-1] == "**" {
				continue
			}
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("invalid pattern %q: bad segment %q", pattern, s)
			}
			clean = append(clean, s)
		}
		if len(clean) == 0 {
			return nil, fmt.Errorf("pattern %q matches nothing", pattern)
		}
		g.alts = append(g.alts, clean)
	}
	return g, nil
}

// match reports whether the relative slash path rel matches the pattern.
func (g *globPattern) match(rel string) bool {
	s := strings.Split(rel, "/")
	for _, p := range g.alts {
		if matchSegments(p, s, false) {
			return true
		}
	}
	return false
}

// mayContain reports whether some path below the directory rel could match,
// so a walk can skip subtrees that cannot.
func (g *globPattern) mayContain(rel string) bool {
	s := strings.Split(rel, "/")
	for _, p := range g.alts {
		if matchSegments(p, s, true) {
			return true
		}
	}
	return false
}

// matchSegments matches pattern segments p against path segments s. With
// prefix set it also succeeds when s runs out first, i.e. when s could be
// the directory of a match. Memoised so that several "**" stay polynomial.
func matchSegments(p, s []string, prefix bool) bool {
	memo := make(map[[2]int]bool)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(p):
			ok = j == len(s)
		case p[i] == "**":
			// "**" as the last segment matches everything below; otherwise
			// try every split point.
			ok = i == len(p)-1 && (j < len(s) || prefix)
			for k := j; !ok && k <= len(s); k++ {
				ok = rec(i+1, k)
			}
		case j == len(s):
			ok = prefix
		default:
			m, _ := path.Match(p[i], s[j])
			ok = m && rec(i+1, j+1)
		}
		memo[key] = ok
		return ok
	}
	return rec(0, 0)
}

// expandBraces turns "a.{go,md}" into ["a.go", "a.md"], recursively.
func expandBraces(pattern string) ([]string, error) {
	open := strings.IndexByte(pattern, '{')
	if open < 0 {
		return []string{pattern}, nil
	}
	depth, closeAt := 0, -1
	var parts []string
	last := open + 1
	for i := open; i < len(pattern) && closeAt < 0; i++ {
		switch pattern[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, pattern[last:i])
				closeAt = i
			}
		case ',':
			if depth == 1 {
				parts = append(parts, pattern[last:i])
				last = i + 1
			}
		}
	}
	if closeAt < 0 {
		return nil, fmt.Errorf("invalid pattern %q: unclosed {", pattern)
	}
	var out []string
	for _, part := range parts {
		rest, err := expandBraces(pattern[:open] + part + pattern[closeAt+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxBraceExpansions {
			return nil, fmt.Errorf("invalid pattern %q: more than %d brace alternatives", pattern, maxBraceExpansions)
		}
	}
	return out, nil
}
