package goals

import (
	"fmt"
	"slices"
	"strings"

	"reasonix/agent"
)

// fairShares splits budget bytes among texts of the given sizes, max-min
// fair: a text smaller than an equal share keeps everything, and what it
// leaves is split among the bigger ones. The shares sum to at most budget.
func fairShares(sizes []int, budget int) []int {
	shares := make([]int, len(sizes))
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return sizes[a] - sizes[b] })
	left := max(budget, 0)
	for k, i := range idx {
		share := left / (len(idx) - k)
		shares[i] = min(sizes[i], share)
		left -= shares[i]
	}
	return shares
}

// upstreamAnswer is one dependency's final answer.
type upstreamAnswer struct {
	ID     string
	Answer string
}

// upstreamBlock renders the <upstream-results> block that opens a
// dependent's first message: answers in depends_on order, cut to fair shares
// of one byte budget (the budget counts answer bytes; tags are extra).
func upstreamBlock(deps []upstreamAnswer, budget int) string {
	if len(deps) == 0 {
		return ""
	}
	sizes := make([]int, len(deps))
	for i, d := range deps {
		sizes[i] = len(d.Answer)
	}
	shares := fairShares(sizes, budget)
	var b strings.Builder
	b.WriteString("<upstream-results>\n")
	for i, d := range deps {
		fmt.Fprintf(&b, "<result id=%q>\n%s\n</result>\n", d.ID, agent.BoundResult(d.Answer, shares[i]))
	}
	b.WriteString("</upstream-results>")
	return b.String()
}
