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

// editDistance is the number of single-rune insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (optimal string
// alignment). Swapped letters are the commonest typo ("auot"), so a swap
// counts as one edit, not two.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
