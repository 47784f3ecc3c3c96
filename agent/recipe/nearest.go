package recipe

import (
	"slices"
	"strings"
)

// maxSuggestions is how many names an unknown-command answer offers.
const maxSuggestions = 3

// Nearest returns up to three known names closest to name: those that
// share a prefix or are within a few edits, best first. Nil when nothing
// is close, so an answer never suggests something unrelated.
func Nearest(name string, known []string) []string {
	type cand struct {
		name string
		dist int
	}
	limit := min(max(len(name)/3, 1), 3)
	var cs []cand
	for _, k := range known {
		d := distance(strings.ToLower(name), strings.ToLower(k))
		if len(name) >= 2 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k)) {
			d = min(d, 1)
		}
		// A namespaced name ("git:commit") is also near its last part.
		if i := strings.LastIndexByte(k, ':'); i >= 0 && strings.EqualFold(k[i+1:], name) {
			d = min(d, 1)
		}
		if d <= limit {
			cs = append(cs, cand{k, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for i := 0; i < len(cs) && i < maxSuggestions; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// distance is the optimal-string-alignment edit distance over bytes
// (command names are ASCII), swaps of neighbours counting one.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
