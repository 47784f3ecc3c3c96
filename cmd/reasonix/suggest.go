package main

import "unicode/utf8"

// nearest returns the candidate closest to word by edit distance, or ""
// when none is close enough to be a plausible typo. A prefix of a candidate
// ("app" for "approvals") counts as close.
func nearest(word string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(word, c)
		if len(word) >= 2 && len(word) < len(c) && c[:len(word)] == word {
			d = 1
		}
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	// Allow about one typo per three letters, at least one and at most three.
	limit := min(max(utf8.RuneCountInString(word)/3, 1), 3)
	if best == "" || bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
